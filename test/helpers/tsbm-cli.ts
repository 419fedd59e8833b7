// Runs the built CLI in a directory with a private HOME and a clean environment (PATH only,
// plus what the test adds): nothing from the developer's own tsbm.cfg or TSBM_* variables, except
// the test file's private node lock directory (test/helpers/lock-dir-setup.ts): without it a run
// as root locks hosts in /var/lib/tsbm/locks, shared with every other test run on the machine.
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const bin = join(resolve(import.meta.dirname, '../..'), 'bin/tsbm.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout then stderr. */
  all: string;
}

export function runCli(args: string[], at: { cwd: string; home: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): CliResult {
  const r = spawnSync(process.execPath, [bin, ...args], {
    cwd: at.cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: at.home, NO_COLOR: '1', TSBM_LOCK_DIR: process.env.TSBM_LOCK_DIR, ...at.env },
    timeout: at.timeoutMs ?? 240_000, // only a hang: a loaded CI machine is slow
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, all: r.stdout + r.stderr };
}
