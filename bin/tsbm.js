#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/. Kept tiny so `tsbm --version` starts fast.
import('../dist/cli/main.js').then((m) => m.main(process.argv)).catch((err) => {
  process.stderr.write(`tsbm: unexpected error: ${err && err.message ? err.message : String(err)}\n`);
  process.exit(250);
});
