// Entry point of the curl stand-in (packages/lab/ramdisk/standin/curl runs it as
// packages/lab/dist/curl/curl-cli.js on machines without curl).
import { readFileSync } from 'node:fs';
import { runCurl } from './curl-run.js';

process.exitCode = await runCurl(process.argv.slice(2), {
  readStdin: () => readFileSync(0, 'utf8'),
  readStdinBytes: () => readFileSync(0),
  stdout: process.stdout,
  stderr: (t) => process.stderr.write(t),
});
