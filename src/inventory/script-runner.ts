// Runs inventory scripts for the (synchronous) inventory loader. Each script runs in its own
// process group under a time limit; when the limit passes, the whole group is stopped, so a
// script that forked a hanging helper cannot hold tsbm up. The waiting is done by a small node
// process of its own (spawnSync waits for it), because spawnSync alone can neither stop a
// process group nor stop waiting while a grandchild keeps the output pipe open.
import { spawnSync } from 'node:child_process';

export interface ScriptJob {
  file: string;
  args: string[];
}

export interface ScriptResult {
  /** Exit code, or null when the script was killed or did not start. */
  code: number | null;
  signal: string | null;
  stdout: string;
  /** The end of what the script wrote on stderr. */
  stderrTail: string;
  timedOut: boolean;
  /** Set when the script could not be started (not executable, interpreter missing). */
  startError: string | undefined;
  /** Set when the output passed the size limit (the script was stopped). */
  tooLarge: boolean;
}

export interface RunnerOptions {
  timeoutMs: number;
  /** Scripts run at once (the per-host calls). */
  concurrency: number;
  maxOutputBytes: number;
  cwd?: string;
}

const STDERR_TAIL = 4000;

/**
 * The runner process's program. It runs as `node -e`, so it uses nothing but what it requires
 * itself; its input is the jobs as JSON on stdin, its output the results as JSON on stdout.
 */
function runnerMain(): void {
  const { spawn } = require('node:child_process') as typeof import('node:child_process');
  let input = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (d: string) => {
    input += d;
  });
  process.stdin.on('end', () => {
    const { jobs, timeoutMs, concurrency, maxOutputBytes, stderrTail, cwd } = JSON.parse(input) as {
      jobs: { file: string; args: string[] }[];
      timeoutMs: number;
      concurrency: number;
      maxOutputBytes: number;
      stderrTail: number;
      cwd: string | undefined;
    };
    const results: unknown[] = new Array(jobs.length);
    let next = 0;
    let running = 0;
    const killGroup = (pid: number | undefined, sig: NodeJS.Signals) => {
      if (pid === undefined) return;
      try {
        process.kill(-pid, sig);
      } catch {
        // the group is gone already
      }
    };
    const run = (i: number) => {
      running++;
      const job = jobs[i]!;
      const out: Buffer[] = [];
      let outBytes = 0;
      let err = '';
      let timedOut = false;
      let tooLarge = false;
      let done = false;
      let exit: { code: number | null; signal: string | null } | undefined;
      const child = spawn(job.file, job.args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], ...(cwd ? { cwd } : {}) });
      const finish = (startError?: string) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        clearTimeout(drain);
        // whatever the script left running in its group goes with it
        killGroup(child.pid, 'SIGKILL');
        results[i] = {
          code: startError ? null : (exit?.code ?? null),
          signal: exit?.signal ?? null,
          stdout: Buffer.concat(out).toString('utf8'),
          stderrTail: err.slice(-stderrTail),
          timedOut,
          tooLarge,
          startError,
        };
        running--;
        pump();
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup(child.pid, 'SIGTERM');
        setTimeout(() => killGroup(child.pid, 'SIGKILL'), 2000).unref();
      }, timeoutMs);
      let drain: NodeJS.Timeout | undefined;
      child.stdout!.on('data', (d: Buffer) => {
        outBytes += d.length;
        if (outBytes > maxOutputBytes) {
          tooLarge = true;
          killGroup(child.pid, 'SIGKILL');
          return;
        }
        out.push(d);
      });
      child.stderr!.setEncoding('utf8').on('data', (d: string) => {
        err = (err + d).slice(-stderrTail * 2);
      });
      child.on('error', (e) => finish(e.message));
      child.on('exit', (code, signal) => {
        exit = { code, signal };
        // output still in the pipes comes within moments; a helper holding them open does not
        drain = setTimeout(() => finish(), 500);
      });
      child.on('close', () => finish());
    };
    const pump = () => {
      while (running < concurrency && next < jobs.length) run(next++);
      if (running === 0 && next >= jobs.length) process.stdout.write(JSON.stringify(results));
    };
    pump();
  });
}

const RUNNER_SOURCE = `(${runnerMain.toString()})();`;

/** Runs the jobs (at most `concurrency` at once) and returns their results in order. */
export function runScripts(jobs: ScriptJob[], opts: RunnerOptions): ScriptResult[] {
  if (jobs.length === 0) return [];
  const rounds = Math.ceil(jobs.length / Math.max(1, opts.concurrency));
  const r = spawnSync(process.execPath, ['-e', RUNNER_SOURCE], {
    input: JSON.stringify({ jobs, ...opts, stderrTail: STDERR_TAIL }),
    encoding: 'utf8',
    maxBuffer: opts.maxOutputBytes * Math.min(jobs.length, 16) + (1 << 20),
    // a backstop only: the runner itself stops every script at its time limit
    timeout: rounds * (opts.timeoutMs + 5000) + 30_000,
  });
  if (r.status !== 0 || !r.stdout) {
    throw new Error(`the inventory script runner failed (${r.error?.message ?? `exit ${r.status}`}): ${(r.stderr ?? '').slice(-500)}`);
  }
  return JSON.parse(r.stdout) as ScriptResult[];
}
