// Another controller, as a child process holding node locks through the built store
// (dist/nodes/): it takes the given nodes, says `held FENCE`, then obeys lines on stdin
// (`check`, `write STATE`, `release`) and answers each with `ok` or `refused MESSAGE`. Tests
// SIGKILL it (a dead holder) or SIGSTOP it (a paused one). Needs `npm run build`.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const DIST = join(import.meta.dirname, '../../dist/nodes');
export const distBuilt = existsSync(join(DIST, 'open.js'));

const SCRIPT = `
import { openNodeStore } from ${JSON.stringify(join(DIST, 'open.js'))};
import { parseStoreSetting } from ${JSON.stringify(join(DIST, 'setting.js'))};
import { createInterface } from 'node:readline';
const [setting, runId, ...keys] = process.argv.slice(1);
const store = await openNodeStore(parseStoreSetting(setting, 'test', undefined), { watchMs: 50 });
let held;
try {
  held = await store.acquire(keys.map((key) => ({ host: key, key })), runId);
} catch (e) {
  console.log('refused ' + e.message);
  process.exit(0);
}
console.log('held ' + held.lease(keys[0]).fence);
for await (const line of createInterface({ input: process.stdin })) {
  const [cmd, arg] = line.split(' ');
  try {
    if (cmd === 'check') await store.check(held.lease(keys[0]));
    if (cmd === 'write') for (const k of keys) await store.write(held.lease(k), { key: k, name: k, provisionState: arg, protected: false, runId });
    if (cmd === 'release') { await held.release(); await store.close(); console.log('ok'); process.exit(0); }
    console.log('ok');
  } catch (e) {
    console.log('refused ' + e.message);
  }
}`;

export interface ChildHolder {
  proc: ChildProcess;
  /** The first line: `held FENCE` or `refused MESSAGE`. */
  first: Promise<string>;
  /** Sends a command and resolves with its answer line. */
  send(cmd: string): Promise<string>;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
}

export function holdInChild(setting: string, runId: string, keys: readonly string[]): ChildHolder {
  const proc = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT, setting, runId, ...keys], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const waiting: ((l: string) => void)[] = [];
  createInterface({ input: proc.stdout! }).on('line', (l) => {
    const w = waiting.shift();
    if (w) w(l);
    else lines.push(l);
  });
  const next = () => new Promise<string>((ok) => (lines.length ? ok(lines.shift()!) : waiting.push(ok)));
  const exited = new Promise<void>((ok) => proc.once('exit', () => ok()));
  return {
    proc,
    first: next(),
    send: (cmd) => {
      proc.stdin!.write(`${cmd}\n`);
      return next();
    },
    exited,
  };
}
