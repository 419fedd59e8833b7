// Drives the built CLI (bin/tsbm.js) as a child process for the fault and resume tests. Async
// so an in-process simulated lab keeps serving while the runner works; every run gets its own
// journal and lock directories so tests never share the repository's .tsbm.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const TSBM = join(ROOT, 'bin', 'tsbm.js');
export const DEPLOY = join(ROOT, 'playbooks', 'deploy-bootc.yml');

export interface CliEvent {
  type: string;
  host?: string;
  task?: string;
  taskId?: string;
  status?: string;
  msg?: string;
  time?: number;
  [k: string]: unknown;
}

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** JSON lines from --output json (a line torn by a kill is dropped). */
  events: CliEvent[];
  ms: number;
}

export interface Running {
  child: ChildProcess;
  done: Promise<CliRun>;
}

/** Where a test keeps one run's state: journal dir and lock dir under `dir`. */
export function stateArgs(dir: string): { args: string[]; env: NodeJS.ProcessEnv } {
  return { args: ['--journal-dir', join(dir, 'runs')], env: { ...process.env, TSBM_LOCK_DIR: join(dir, 'locks') } };
}

export function spawnTsbm(args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Running {
  const t0 = Date.now();
  const child = spawn(process.execPath, [TSBM, ...args], { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  // A hung runner is a failure of its own: killed so the test reports it instead of timing out.
  const guard = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 180_000);
  const done = new Promise<CliRun>((res) => {
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      const events: CliEvent[] = [];
      for (const l of stdout.split('\n')) {
        if (!l.trim()) continue;
        try {
          events.push(JSON.parse(l) as CliEvent);
        } catch {
          // torn by SIGKILL
        }
      }
      res({ code, signal, stdout, stderr, events, ms: Date.now() - t0 });
    });
  });
  return { child, done };
}

export function runTsbm(args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<CliRun> {
  return spawnTsbm(args, opts).done;
}

/** The final failed/unreachable result per host. */
export function failuresOf(run: CliRun): Map<string, CliEvent> {
  const out = new Map<string, CliEvent>();
  for (const e of run.events) {
    if (e.type === 'host_result' && e.host && (e.status === 'failed' || e.status === 'unreachable') && e.item === undefined) out.set(e.host, e);
  }
  return out;
}

/**
 * The first failed/unreachable result per host: where it fell (a failure the deploy's rescue
 * handles reports as rescued; the cleanup fails the host again later).
 */
export function firstFailuresOf(run: CliRun): Map<string, CliEvent> {
  const out = new Map<string, CliEvent>();
  const fell = (s: unknown) => s === 'failed' || s === 'rescued' || s === 'unreachable';
  for (const e of run.events) {
    if (e.type === 'host_result' && e.host && fell(e.status) && e.item === undefined && !out.has(e.host)) out.set(e.host, e);
  }
  return out;
}

/** Recap stats per host, when the run got that far. */
export function recapOf(run: CliRun): Record<string, { ok: number; failed: number; unreachable: number }> | undefined {
  const r = run.events.find((e) => e.type === 'recap') as { stats?: Record<string, { ok: number; failed: number; unreachable: number }> } | undefined;
  return r?.stats;
}

export { seededRandom } from '../../src/util/seeded-random.js';

/** Lock files left in a lock directory (it also holds the node records, under nodes/). */
export function locksLeft(lockDir: string): string[] {
  return existsSync(lockDir) ? readdirSync(lockDir).filter((f) => f.endsWith('.lock')) : [];
}
