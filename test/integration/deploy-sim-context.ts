// Test harness for the deploy modules: a simulated ramdisk (in-process SSH server whose
// commands see test/standin/ramdisk-tools first on PATH) and a ModuleContext over a real SSH connection
// that records every event, so tests can check argv, files and secrecy end to end.
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSsh } from '../../src/connection/ssh.js';
import type { Connection } from '../../src/connection/types.js';
import type { ModuleContext, ModuleDef, ModuleResult, ProgressUpdate } from '../../src/module-api/types.js';
import { Redactor } from '../../src/output/redact.js';
import { shellExecHandler } from '../../src/sim/ssh/exec.js';
import { simToolsDir } from '../helpers/standin-tools.js';
import type { Vars } from '../../src/types.js';
import { type SshHost, startSshHost } from '../helpers/ssh-host.js';
import { execSteps } from '../../src/connection/exec-steps.js';
import { splitArgs } from '../../src/modules/lib/split-args.js';

export interface SimNode {
  host: SshHost;
  state: string;
  /** Scratch dir standing for the ramdisk's tmpfs (/run/tsbm) and /etc/containers. */
  root: string;
  conn: Connection;
  events: Array<{ kind: 'log' | 'warn' | 'progress'; message: string }>;
  redactor: Redactor;
  ctx(vars?: Vars, opts?: { check?: boolean }): ModuleContext;
  run<M extends ModuleDef>(
    mod: M,
    args: Record<string, unknown>,
    vars?: Vars,
    opts?: { check?: boolean },
  ): Promise<ModuleResult>;
  close(): Promise<void>;
}

export async function startSimNode(
  opts: {
    diskMiB?: number;
    files?: Record<string, string>;
    /** More tools (name: sh script), first on PATH. */
    tools?: Record<string, string>;
    /** false: the ramdisk's sshd has no sftp subsystem (files then travel piped). */
    sftp?: false;
  } = {},
): Promise<SimNode> {
  const state = mkdtempSync(path.join(os.tmpdir(), 'tsbm-sim-state-'));
  const extraTools = path.join(state, 'tools');
  mkdirSync(extraTools);
  for (const [name, script] of Object.entries(opts.tools ?? {})) writeFileSync(path.join(extraTools, name), script, { mode: 0o755 });
  const root = mkdtempSync(path.join(os.tmpdir(), 'tsbm-sim-root-'));
  writeFileSync(path.join(state, 'disk.img'), '');
  truncateSync(path.join(state, 'disk.img'), (opts.diskMiB ?? 8192) * 1024 * 1024);
  for (const [f, c] of Object.entries(opts.files ?? {})) writeFileSync(path.join(state, f), c);
  const host = await startSshHost({
    ...(opts.sftp === false ? { sftp: false } : {}),
    exec: shellExecHandler({
      pathPrefix: [extraTools, simToolsDir()],
      env: { ...(process.env as Record<string, string>), TSBM_SIM_STATE: state },
    }),
  });
  const conn = await openSsh(host.spec);
  const events: SimNode['events'] = [];
  const redactor = new Redactor();
  const node: SimNode = {
    host,
    state,
    root,
    conn,
    events,
    redactor,
    ctx(vars: Vars = {}, o: { check?: boolean } = {}): ModuleContext {
      const ac = new AbortController();
      return {
        host: 'node1',
        vars,
        check: o.check ?? false,
        diff: false,
        signal: ac.signal,
        task: 'test task',
        services: {
          playbookDir: root,
          tmpDir: root,
          get: <T>(_k: string, create: () => T) => create(),
          onClose: () => undefined,
        },
        exec: (argv, eo) => conn.exec(argv, eo),
        execSteps: (s, eo) => execSteps(conn, s, eo),
        execShell: (c, eo) => conn.execShell(c, eo),
        put: (d, p, po) => conn.put(d, p, po),
        get: (p) => conn.get(p),
        local: (argv, eo) => conn.exec(argv, eo),
        connect: () => openSsh(host.spec),
        secret: <T extends string>(v: T): T => {
          redactor.add(v);
          return v;
        },
        log: (message: string) => events.push({ kind: 'log', message }),
        warn: (message: string) => events.push({ kind: 'warn', message }),
        progress: (u: ProgressUpdate) => events.push({ kind: 'progress', message: u.message }),
      };
    },
    async run(mod, args, vars = {}, o = {}) {
      return mod.run(node.ctx(vars, o), args as never);
    },
    async close() {
      await conn.close();
      await host.close();
      rmSync(state, { recursive: true, force: true });
      rmSync(root, { recursive: true, force: true });
    },
  };
  return node;
}

/**
 * The node's commands one per step: a batch (ModuleContext.execSteps, one remote shell) is
 * split back into the argv lines it ran, so tests can look for a single command.
 */
export function ranSteps(commands: readonly string[]): string[] {
  return commands.flatMap((c) => {
    if (!c.includes('__tsbm_step_')) return [c];
    // Before the login shell is known the batch is `sh -c SCRIPT`; after, the script itself.
    const script = c.startsWith('sh -c ') ? (splitArgs(c)[2] ?? '') : c;
    return script.split('\n').map((line) => line.replace(/(?: <\/dev\/null)?; printf .*$/, ''));
  });
}
