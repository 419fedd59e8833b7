// Entry point of the sfdisk stand-in (packages/lab/ramdisk/standin/sfdisk runs it as
// packages/lab/dist/gpt/sfdisk-cli.js on machines without util-linux's sfdisk). The script, when the
// command takes one, is read from stdin.
import { readFileSync } from 'node:fs';
import { runSfdisk } from './sfdisk-run.js';

const r = runSfdisk(process.argv.slice(2), () => readFileSync(0, 'utf8'));
process.stdout.write(r.stdout);
process.stderr.write(r.stderr);
process.exitCode = r.code;
