// The page's stylesheet and script, read from src/report/client/ (shipped in the package) when a
// report is written; found from the package root both compiled (dist/report) and from source.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLIENT_DIR = join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), 'src', 'report', 'client');

/** The client scripts in the order they run: helpers first, main (which starts the page) last. */
const CLIENT_SCRIPTS = ['format.js', 'data.js', 'timeline.js', 'summary.js', 'node-view.js', 'main.js'];

let cached: { css: string; js: string } | undefined;

export function reportAssets(): { css: string; js: string } {
  if (!cached) {
    const read = (f: string) => readFileSync(join(CLIENT_DIR, f), 'utf8');
    // One function scope around the scripts: nothing leaks into the page's globals.
    const js = `(() => {\n'use strict';\n${CLIENT_SCRIPTS.map((f) => `// ${f}\n${read(f)}`).join('\n')}\n})();`;
    cached = { css: read('report.css'), js };
  }
  return cached;
}
