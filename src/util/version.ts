// tsbm's version: package.json's, the only place it is written (the CLI's --version, the run
// journal's and events' run_start).
import { readFileSync } from 'node:fs';

let version: string | undefined;

/** tsbm's version from package.json (found relative to this file in both src/ and dist/). */
export function tsbmVersion(): string {
  if (version === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
      version = typeof pkg.version === 'string' ? pkg.version : '0.0.0';
    } catch {
      version = '0.0.0';
    }
  }
  return version;
}
