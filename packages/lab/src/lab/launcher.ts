// The `sim up/down/status` side: start the lab process detached, wait until it is ready, find
// it again later through lab.json, and stop it.
import { fork } from 'node:child_process';
import { existsSync, openSync, readFileSync } from 'node:fs';
import { makeLabDir } from './private-dir.js';
import { join, resolve } from 'node:path';
import { TsbmError } from 'tsbm/lib/errors.js';
import type { SimLabOptions } from 'tsbm/lib/inventory/sim-lab.js';
import { sleep } from 'tsbm/lib/util/wait.js';
import { type LabRecord, labRecordFile } from './control.js';
import { checkHostPrograms } from './host-programs.js';
import { PACKAGE_ROOT } from './package-paths.js';

/** The lab process's entry (serve-main.ts), compiled: tests running the lab from source start it too. */
const SERVE_MAIN = join(PACKAGE_ROOT, 'dist', 'lab', 'serve-main.js');

/** What `tsbm sim up` and a `tsbm_sim` inventory ask for (tsbm's SimLabOptions). */
export type UpOptions = SimLabOptions;

function readLabRecord(dir: string): LabRecord | undefined {
  const f = labRecordFile(resolve(dir));
  if (!existsSync(f)) return undefined;
  const rec = JSON.parse(readFileSync(f, 'utf8')) as LabRecord;
  try {
    process.kill(rec.pid, 0);
    return rec;
  } catch {
    return undefined; // the lab process died; its record is stale
  }
}

export async function labUp(o: UpOptions): Promise<LabRecord> {
  checkHostPrograms(); // here too, so the error and its hint reach the terminal, not just lab.log
  const dir = resolve(o.dir);
  const running = readLabRecord(dir);
  if (running) {
    throw new TsbmError('options', `a simulated lab is already running in ${dir} (pid ${running.pid})`, {
      hint: `stop it with \`tsbm sim down --dir ${o.dir}\` first`,
    });
  }
  makeLabDir(dir);
  const log = openSync(join(dir, 'lab.log'), 'a');
  const { dir: _dir, ...rest } = o;
  const child = fork(SERVE_MAIN, [dir, JSON.stringify(rest)], { detached: true, stdio: ['ignore', log, log, 'ipc'] });
  const record = await new Promise<LabRecord>((resolveP, reject) => {
    // Large labs take a while: every node gets keys, a disk file and an HTTPS BMC.
    const limitS = 60 + Math.ceil(o.nodes / 5);
    const timer = setTimeout(
      () => reject(new TsbmError('runtime', `the simulated lab did not start within ${limitS} s`, { hint: `see ${join(dir, 'lab.log')}` })),
      limitS * 1000,
    );
    child.once('message', (m: { record?: LabRecord; error?: string }) => {
      clearTimeout(timer);
      if (m.record) resolveP(m.record);
      else reject(new TsbmError('runtime', `the simulated lab failed to start: ${m.error ?? 'no reason given'}`, { hint: `see ${join(dir, 'lab.log')}` }));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new TsbmError('runtime', `the simulated lab exited during start (code ${code})`, { hint: `see ${join(dir, 'lab.log')}` }));
    });
  });
  child.removeAllListeners('exit');
  child.disconnect?.();
  child.unref();
  return record;
}

export async function labDown(dir: string): Promise<boolean> {
  const rec = readLabRecord(dir);
  if (!rec) return false;
  process.kill(rec.pid, 'SIGTERM');
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(rec.pid, 0);
    } catch {
      return true;
    }
    await sleep(50);
  }
  process.kill(rec.pid, 'SIGKILL');
  return true;
}

export async function labStatus(dir: string): Promise<Record<string, unknown>[]> {
  const rec = readLabRecord(dir);
  if (!rec) throw new TsbmError('options', `no simulated lab is running in ${resolve(dir)}`, { hint: 'start one with `tsbm sim up --nodes 3`' });
  const res = await fetch(`${rec.controlUrl}/status`);
  return (await res.json()) as Record<string, unknown>[];
}
