// Process-wide CLI state shared by main.ts and the command implementations: the one Redactor
// every line of output passes through, and the version. Light on purpose (loaded for --version).
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { Redactor } from '../output/redact.js';

export const redactor = new Redactor();

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

/** Verbosity from the global -v flags, clamped to 0..3. */
export function verbosityOf(cmd: Command): 0 | 1 | 2 | 3 {
  const v = Number(cmd.optsWithGlobals().verbose ?? 0);
  return Math.max(0, Math.min(3, v)) as 0 | 1 | 2 | 3;
}
