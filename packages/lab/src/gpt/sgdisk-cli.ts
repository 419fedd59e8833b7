// Entry point of the pure-TypeScript sgdisk the simulated ramdisk falls back to on machines
// without gdisk (packages/lab/ramdisk/standin/sgdisk runs it as packages/lab/dist/gpt/sgdisk-cli.js).
import { runSgdisk } from './sgdisk-run.js';

const r = runSgdisk(process.argv.slice(2));
process.stdout.write(r.stdout);
process.stderr.write(r.stderr);
process.exitCode = r.code;
