// THE one place an argv array becomes a remote command string. POSIX sh single quotes keep
// every byte literal except the quote itself, which is closed, escaped and reopened.
import { TsbmError } from '../errors.js';

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
