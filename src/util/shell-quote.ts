// THE one place a value becomes a shell word: argv arrays for remote commands, and values that
// templates (the `quote` helper) or tsbm put on a kickstart or shell line. POSIX sh single quotes
// keep every byte literal except the quote itself, which is closed, escaped and reopened.
import { TsbmError } from '../errors.js';
import { controlCharacterIn } from './control-char.js';

const SAFE = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** Whether `arg` is one shell word as it stands: no quoting needed in any context. */
export function isPlainShellWord(arg: string): boolean {
  return SAFE.test(arg);
}

/** Quote one argument for POSIX sh. Plain words stay readable; everything else is single-quoted. */
export function shQuote(arg: string): string {
  if (arg.includes('\0')) {
    throw new TsbmError('runtime', 'a command argument contains a NUL byte, which no remote shell can carry', {
      hint: 'remove the NUL byte from the argument (pass binary data through stdin or a file instead)',
    });
  }
  if (arg === '') return "''";
  if (isPlainShellWord(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Quote every argument and join with spaces: the string sent to the remote shell. */
export function quoteArgv(argv: readonly string[]): string {
  return argv.map(shQuote).join(' ');
}

/**
 * Quote one value for a line of text a shell or a kickstart parser reads (a kickstart command,
 * a %pre script, a template's shell line): one word, as shQuote makes it, that must also stay on
 * its line. A newline would start a line of the value's choosing (a kickstart command, `%end`),
 * so a value with a control character (a tab aside) is refused, naming `what`.
 */
export function shQuoteLine(value: string, what = 'a value'): string {
  const c = controlCharacterIn(value, true);
  if (c) {
    throw new TsbmError('runtime', `${what} holds a control character (${c}), which cannot stay on one kickstart or shell line`, {
      hint: 'remove it from the value (pass multi-line text through a file instead)',
    });
  }
  return shQuote(value);
}
