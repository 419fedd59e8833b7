// The default exec handler of the in-process SSH server: `sh -c COMMAND` on this machine, with
// an optional sandbox PATH prefix so a simulated lab can put fake tools (lsblk, podman) first.
import { spawn } from 'node:child_process';
import type { SshExecProcess } from './exec-process.js';
import type { SpawnerPool } from './spawner-pool.js';

export type { SshExecProcess } from './exec-process.js';

export interface SshExecSession {
  /** Variables the client sent with `env` requests. */
  env: Record<string, string>;
  user: string;
}

export type SshExecHandler = (command: string, session: SshExecSession) => SshExecProcess;

export interface ShellExecOptions {
  cwd?: string;
  /** Base environment (default: this process's). */
  env?: Record<string, string>;
  /** Directories put in front of PATH. */
  pathPrefix?: string[];
  /** Start commands in these helper processes instead of forking this one (a big lab). */
  spawner?: SpawnerPool;
}

export function shellExecHandler(opts: ShellExecOptions = {}): SshExecHandler {
  return (command, session) => {
    const base: Record<string, string | undefined> = { ...(opts.env ?? process.env), ...session.env };
    if (opts.pathPrefix?.length) base.PATH = [...opts.pathPrefix, base.PATH ?? '/usr/bin:/bin'].join(':');
    // What sshd does: the login shell (sh here) runs the command line.
    const argv = ['-c', command];
    if (opts.spawner) {
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
      return opts.spawner.spawn('/bin/sh', argv, { env, ...(opts.cwd ? { cwd: opts.cwd } : {}) });
    }
    // A process group of its own so a signal reaches the whole pipeline, not only sh.
    const child = spawn('/bin/sh', argv, { cwd: opts.cwd, env: base, stdio: 'pipe', detached: true });
    const killOne = child.kill.bind(child);
    child.kill = (signal?: NodeJS.Signals | number) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal ?? 'SIGTERM');
        return true;
      } catch {
        return killOne(signal);
      }
    };
    return child;
  };
}
