// Process-wide CLI state shared by main.ts and the command implementations: the one Redactor
// every line of output passes through. Light on purpose (loaded for --version).
import type { Command } from 'commander';
import { Redactor } from '../output/redact.js';

export const redactor = new Redactor();

/** Verbosity from the global -v flags, clamped to 0..3. */
export function verbosityOf(cmd: Command): 0 | 1 | 2 | 3 {
  const v = Number(cmd.optsWithGlobals().verbose ?? 0);
  return Math.max(0, Math.min(3, v)) as 0 | 1 | 2 | 3;
}
