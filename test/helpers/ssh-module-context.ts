// A ModuleContext over one real Connection, for module integration tests (the executor builds
// the real one in src/executor/module-context.ts). Records logs, warnings, progress and secrets.
import { execSteps } from '../../src/connection/exec-steps.js';
import os from 'node:os';
import type { Static, TSchema } from '@sinclair/typebox';
import { localConnection } from '../../src/connection/local.js';
import type { Connection } from '../../src/connection/types.js';
import type { ModuleContext, ModuleDef, ModuleResult, ProgressUpdate } from '../../src/module-api/types.js';
import type { Vars } from '../../src/types.js';

export interface TestContext {
  ctx: ModuleContext;
  logs: string[];
  warnings: string[];
  progress: ProgressUpdate[];
  secrets: string[];
}

export interface TestContextOptions {
  host?: string;
  vars?: Vars;
  check?: boolean;
  diff?: boolean;
  playbookDir?: string;
  signal?: AbortSignal;
  /** What ctx.connect() returns (default: throws). */
  connect?: (opts?: { timeoutMs?: number }) => Promise<Connection>;
}

export function testContext(conn: Connection, o: TestContextOptions = {}): TestContext {
  const logs: string[] = [];
  const warnings: string[] = [];
  const progress: ProgressUpdate[] = [];
  const secrets: string[] = [];
  const local = localConnection();
  const store = new Map<string, unknown>();
  const ctx: ModuleContext = {
    host: o.host ?? conn.host,
    vars: o.vars ?? {},
    check: o.check ?? false,
    diff: o.diff ?? false,
    signal: o.signal ?? new AbortController().signal,
    task: 'test task',
    services: {
      playbookDir: o.playbookDir ?? process.cwd(),
      tmpDir: os.tmpdir(),
      get<T>(key: string, create: () => T): T {
        if (!store.has(key)) store.set(key, create());
        return store.get(key) as T;
      },
      onClose() {},
    },
    exec: (argv, opts) => conn.exec(argv, opts),
    // Batches as the executor's context does (one remote shell per batch).
    execSteps: (steps, opts) => execSteps(conn, steps, opts),
    execShell: (cmd, opts) => conn.execShell(cmd, opts),
    put: (d, p, opts) => conn.put(d, p, opts),
    get: (p) => conn.get(p),
    local: (argv, opts) => local.exec(argv, opts),
    connect: (opts) => (o.connect ? o.connect(opts) : Promise.reject(new Error('connect not available in this test'))),
    secret<T extends string>(v: T): T {
      secrets.push(v);
      return v;
    },
    log: (m) => void logs.push(m),
    warn: (m) => void warnings.push(m),
    progress: (p) => void progress.push(p),
  };
  return { ctx, logs, warnings, progress, secrets };
}

/** Runs a module as the executor would, minus validation: `args` are taken as already valid. */
export function runModule<S extends TSchema>(def: ModuleDef<S>, ctx: ModuleContext, args: Record<string, unknown>): Promise<ModuleResult> {
  return def.run(ctx, args as Static<S>);
}
