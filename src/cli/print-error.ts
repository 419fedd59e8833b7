// Turns any error into one redacted line on stderr and its exit code (EXIT in errors.ts).
// Operator mistakes (TsbmError) never show a stack; unexpected ones do only with -vvv.
import { EXIT, TsbmError } from '../errors.js';
import { sanitize } from '../output/format.js';
import type { Redactor } from '../output/redact.js';

export function reportError(
  err: unknown,
  opts: { verbosity: number; redactor: Redactor; write: (text: string) => void },
): number {
  const { redactor } = opts;
  // remote text inside messages must not drive the operator's terminal
  const write = (text: string) => opts.write(sanitize(text));
  if (err instanceof TsbmError) {
    const who = [err.host ? `[${err.host}]` : '', err.task ? `task "${err.task}":` : ''].filter(Boolean).join(' ');
    write(`tsbm: error: ${redactor.redact(`${who ? `${who} ` : ''}${err.oneLine()}`)}\n`);
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  write(`tsbm: unexpected error: ${redactor.redact(message.replace(/\s*\n\s*/g, ' '))}\n`);
  if (opts.verbosity >= 3 && err instanceof Error && err.stack) write(`${redactor.redact(err.stack)}\n`);
  return EXIT.unexpected;
}
