import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quoteArgv, shQuote } from '../../src/util/shell-quote.js';

// Runs the quoted argv through a real /bin/sh and reads back the words it saw, NUL-separated.
function throughSh(argv: string[]): string[] {
  const script = `printf '%s\\0' ${quoteArgv(argv)}`;
  const r = spawnSync('/bin/sh', ['-c', script], { encoding: 'buffer' });
  expect(r.status).toBe(0);
  const parts = r.stdout.toString('utf8').split('\0');
  parts.pop();
  return parts;
}

const arg = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 0, maxLength: 20 }),
  fc.string({ unit: fc.constantFrom("'", '"', '$', '`', '\\', '\n', ' ', '-', '*', '?', ';', '&', '|', '!', '~', '#', '(', ')', '{', '}', '\t', 'a', 'é', '🙂'), maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 16 }).map((s) => s.replace(/\0/g, '')),
);

describe('quoteArgv against a real /bin/sh', () => {
  it('round-trips any argv without NUL (quotes, newlines, $, backticks, unicode, leading -)', () => {
    fc.assert(
      fc.property(fc.array(arg, { minLength: 1, maxLength: 6 }), (argv) => {
        expect(throughSh(argv)).toEqual(argv);
      }),
      { numRuns: 300 },
    );
    // 300 shells: generous for a loaded machine.
  }, 300_000);

  it('keeps plain words readable and quotes the rest', () => {
    expect(shQuote('ls')).toBe('ls');
    expect(shQuote('/usr/bin/x')).toBe('/usr/bin/x');
    expect(shQuote('')).toBe("''");
    expect(shQuote("it's")).toBe(`'it'\\''s'`);
    expect(shQuote('$HOME')).toBe("'$HOME'");
    expect(throughSh(['-n', '--', '', "a'b", '$(id)', '`id`'])).toEqual(['-n', '--', '', "a'b", '$(id)', '`id`']);
  });

  it('rejects NUL bytes with a clear error', () => {
    expect(() => quoteArgv(['a\0b'])).toThrow(/NUL byte/);
  });
});
