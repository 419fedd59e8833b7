// The lab's background process, forked by `tsbm sim up` (launcher.ts) with the lab directory and
// its options as JSON; it serves until `tsbm sim down` sends SIGTERM.
import { serveLab } from './control.js';
import type { UpOptions } from './launcher.js';

const [dir, json] = process.argv.slice(2);
const o = JSON.parse(json ?? '{}') as Omit<UpOptions, 'dir'>;
serveLab({ ...o, dir: dir ?? '.' }).catch((e: unknown) => {
  process.stderr.write(`tsbm sim: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
