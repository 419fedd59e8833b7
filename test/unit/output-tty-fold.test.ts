import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stripAnsi } from '../../src/output/color.js';
import { foldLine } from '../../src/output/renderers/tty-fold.js';

describe('foldLine', () => {
  it('keeps short lines as they are and folds long ones with the continuation indent', () => {
    expect(foldLine('short', 10)).toEqual(['short']);
    expect(foldLine('abcdefghijkl', 5, '  ')).toEqual(['abcde', '  fgh', '  ijk', '  l']);
    expect(foldLine('one two three four', 10, '  ')).toEqual(['one two', '  three', '  four']);
  });

  it('does not count colour codes as width', () => {
    const red = '\x1b[31m✖\x1b[0m node2  failed';
    expect(foldLine(red, 15)).toEqual([red]);
  });

  it('starts a continuation line at each newline', () => {
    expect(foldLine('one\ntwo', 20, '    ')).toEqual(['one', '    two']);
  });

  it('never exceeds the width and loses no visible character', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.integer({ min: 6, max: 120 }), (raw, width) => {
        const text = raw.replace(/[\x00-\x1f\x7f]/g, 'x');
        const lines = foldLine(text, width, '    ');
        for (const l of lines) expect([...stripAnsi(l)].length).toBeLessThanOrEqual(width);
        const squash = (s: string) => s.replace(/\s+/g, '');
        expect(squash(lines.join(''))).toBe(squash(text));
      }),
    );
  });
});
