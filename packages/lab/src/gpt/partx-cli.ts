// Entry point of the partx stand-in (packages/lab/ramdisk/standin/partx runs it as
// packages/lab/dist/gpt/partx-cli.js on machines without util-linux's partx).
import { runPartx } from './partx-run.js';

const r = runPartx(process.argv.slice(2));
process.stdout.write(r.stdout);
process.stderr.write(r.stderr);
process.exitCode = r.code;
