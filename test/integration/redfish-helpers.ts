// Test support for the Redfish suites: a minimal ModuleContext (the executor builds the real
// one) that records logs/warnings/progress unredacted (so leak tests see what modules emit)
// and registers secrets with the shared Redactor.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach } from 'vitest';
import { Redactor } from '../../src/output/redact.js';
import type { ModuleContext, RunServices } from '../../src/module-api/types.js';
import type { Vars } from '../../src/types.js';

// The captured trees live in the project's shared folder beside the checkout (CI lays a copy
// beside its clone); TSBM_MOCKUPS overrides.
const MOCKUP_CANDIDATES = [
  process.env.TSBM_MOCKUPS,
  resolve(import.meta.dirname, '..', '..', '..', 'shared', 'redfish-mockups'),
  '/work/shared/redfish-mockups',
].filter((d): d is string => !!d);
export const MOCKUPS = MOCKUP_CANDIDATES.find((d) => existsSync(join(d, 'hpe-ilo5-dl325-gen10plus'))) ?? MOCKUP_CANDIDATES[1]!;
export const TREES = ['hpe-ilo5-dl325-gen10plus', 'openbmc-bmcweb-stock', 'dmtf-public-rackmount1', 'dell-idrac9-partial', 'supermicro-sys510t-partial'] as const;

export interface TestCtx {
  ctx: ModuleContext;
  logs: { level: number; message: string }[];
  warnings: string[];
  progress: string[];
  /** Retry reports (ModuleContext.retry). */
  retries: string[];
  redactor: Redactor;
  /** Everything the context emitted, as one string (for leak checks). */
  emitted(): string;
  close(): Promise<void>;
}

export function makeCtx(vars: Vars, opts: { check?: boolean; services?: TestServices } = {}): TestCtx {
  const logs: { level: number; message: string }[] = [];
  const warnings: string[] = [];
  const progress: string[] = [];
  const retries: string[] = [];
  const redactor = new Redactor();
  const services = opts.services ?? new TestServices();
  const unsupported = () => Promise.reject(new Error('not available to controller modules in tests'));
  const ctx: ModuleContext = {
    host: 'node1',
    vars,
    check: opts.check ?? false,
    diff: false,
    signal: new AbortController().signal,
    services,
    task: 'test task',
    exec: unsupported,
    execSteps: unsupported,
    execShell: unsupported,
    put: unsupported,
    get: unsupported,
    local: unsupported,
    connect: unsupported,
    secret: (v) => {
      redactor.add(v);
      return v;
    },
    log: (message, level = 1) => logs.push({ level, message }),
    warn: (m) => warnings.push(m),
    progress: (u) => progress.push(u.message),
    retry: (r) => retries.push(r.message),
  };
  return {
    ctx,
    logs,
    warnings,
    progress,
    retries,
    redactor,
    emitted: () => JSON.stringify({ logs, warnings, progress, retries }),
    close: () => services.close(),
  };
}

export class TestServices implements RunServices {
  playbookDir = process.cwd();
  tmpDir = '/tmp';
  private readonly items = new Map<string, unknown>();
  private readonly closers: (() => Promise<void> | void)[] = [];
  get<T>(key: string, create: () => T): T {
    if (!this.items.has(key)) this.items.set(key, create());
    return this.items.get(key) as T;
  }
  onClose(fn: () => Promise<void> | void): void {
    this.closers.push(fn);
  }
  async close(): Promise<void> {
    for (const fn of this.closers.splice(0).reverse()) await fn();
    this.items.clear();
  }
}

/** driver_info for a fake BMC, trusting its certificate by default through a written CA file. */
export function driverInfo(bmc: { url: string }, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { redfish_address: bmc.url, redfish_username: 'admin', redfish_password: 'S3cret-pass!', ...extra };
}

/** Registers an afterEach that closes every fake BMC and test context passed to the function it returns. */
export function closeAfterEach(): (bmc: { close(): Promise<void> }, t: TestCtx) => void {
  const open: { bmc: { close(): Promise<void> }; t: TestCtx }[] = [];
  afterEach(async () => {
    for (const { bmc, t } of open.splice(0)) {
      await t.close();
      await bmc.close();
    }
  });
  return (bmc, t) => {
    open.push({ bmc, t });
  };
}
