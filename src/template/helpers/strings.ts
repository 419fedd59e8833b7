// String and list shaping helpers.
import { HelperFail } from '../fail.js';
import type { HelperDef } from './define.js';
import { shQuoteLine } from '../../util/shell-quote.js';
import { TsbmError } from '../../errors.js';

function str(name: string, v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new HelperFail(
    name,
    `expects a string, got ${v === null ? 'null' : Array.isArray(v) ? 'a list' : typeof v}`,
  );
}

function compileRegex(name: string, pattern: unknown, flags?: unknown): RegExp {
  try {
    return new RegExp(str(name, pattern), flags === undefined ? '' : str(name, flags));
  } catch (e) {
    throw new HelperFail(
      name,
      `bad regular expression: ${(e as Error).message}`,
      'fix the pattern (JavaScript syntax)',
    );
  }
}

export const stringHelpers: HelperDef[] = [
  { name: 'lower', summary: 'lower-case a string', fn: (a) => str('lower', a[0]).toLowerCase() },
  { name: 'upper', summary: 'upper-case a string', fn: (a) => str('upper', a[0]).toUpperCase() },
  { name: 'trim', summary: 'strip surrounding whitespace', fn: (a) => str('trim', a[0]).trim() },
  {
    name: 'replace',
    summary: 'replace every occurrence of a substring',
    fn: (a) =>
      str('replace', a[0])
        .split(str('replace', a[1]))
        .join(a[2] === undefined ? '' : str('replace', a[2])),
  },
  {
    name: 'split',
    summary: 'split a string into a list (default separator: whitespace)',
    fn: (a) => {
      const s = str('split', a[0]);
      if (a[1] === undefined) return s.split(/\s+/).filter((x) => x !== '');
      return s.split(str('split', a[1]));
    },
  },
  {
    name: 'join',
    summary: 'join a list into a string (default separator: ",")',
    fn: (a) => {
      if (!Array.isArray(a[0])) throw new HelperFail('join', 'expects a list');
      const sep = a[1] === undefined ? ',' : str('join', a[1]);
      return a[0].map((x) => (x !== null && typeof x === 'object' ? JSON.stringify(x) : String(x))).join(sep);
    },
  },
  {
    // Ansible's `quote` filter, kept to one line: kickstarts and shell lines read line by line.
    name: 'quote',
    summary: 'quote a value as one POSIX shell word on one line (a newline in it is an error)',
    fn: (a) => {
      try {
        return shQuoteLine(str('quote', a[0]), 'the value');
      } catch (e) {
        if (e instanceof TsbmError) throw new HelperFail('quote', e.message, e.hint);
        throw e;
      }
    },
  },
  {
    name: 'regex_match',
    summary: 'true when a string matches a regular expression (anywhere; anchor with ^ $)',
    fn: (a) => {
      const re = compileRegex('regex_match', a[1], a[2]);
      return a[0] === undefined || a[0] === null ? false : re.test(str('regex_match', a[0]));
    },
  },
];
