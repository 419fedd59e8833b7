import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TsbmError } from '../../src/errors.js';
import { quoteArgv } from '../../src/util/shell-quote.js';
import { splitArgs } from '../../src/modules/commands/split-args.js';
import { parseMode } from '../../src/modules/files/file-mode.js';

describe('splitArgs', () => {
  it('splits like sh words, without expansions', () => {
    expect(splitArgs(`ls -l "a b" 'c d' e\\ f $HOME`)).toEqual(['ls', '-l', 'a b', 'c d', 'e f', '$HOME']);
    expect(splitArgs(`echo "x\\"y" 'it'"'"'s' ""`)).toEqual(['echo', 'x"y', "it's", '']);
    expect(splitArgs('  a   b  ')).toEqual(['a', 'b']);
  });
  it('agrees with sh on what it would split (no expansions involved)', () => {
    const word = fc.string({ unit: fc.constantFrom('a', ' ', "'", '"', '\\', 'é', '-', '\t'), maxLength: 8 });
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 4 }), (argv) => {
        const line = quoteArgv(argv);
        const r = spawnSync('/bin/sh', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' });
        const viaSh = r.stdout.split('\0').slice(0, -1);
        expect(splitArgs(line)).toEqual(viaSh);
      }),
      { numRuns: 200 },
    );
  });
  it('reports unterminated quotes', () => {
    expect(() => splitArgs('echo "x')).toThrow(/unterminated double quote/);
  });
});

describe('parseMode', () => {
  it('reads octal strings and bare numbers as the octal digits written', () => {
    expect(parseMode('0644')).toBe(0o644);
    expect(parseMode('755')).toBe(0o755);
    expect(parseMode(644)).toBe(0o644);
    expect(parseMode('0o600')).toBe(0o600);
    expect(parseMode(undefined)).toBeUndefined();
    let hint: string | undefined;
    try {
      parseMode('u+rwx');
    } catch (e) {
      hint = (e as TsbmError).hint;
    }
    expect(hint).toMatch(/octal string/);
    expect(() => parseMode(999)).toThrow(/invalid file mode/);
  });
});
