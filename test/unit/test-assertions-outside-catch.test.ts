// No assertion lives only inside a `catch`: such a test passes when nothing throws (and an
// `expect.unreachable()` in the try is caught by that same catch). Tests take what was thrown
// with test/helpers/thrown.ts and assert outside. A catch that asserts is accepted only where the
// code after it throws when nothing was caught (the helper pattern) or the catch itself rethrows.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const TEST = resolve(import.meta.dirname, '..');

function files(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) files(p, out);
    else if (e.name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** The index just past the brace that closes the one at `open`. */
function closing(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return i + 1;
  }
  return text.length;
}

/** `file:line` of each catch block that asserts with nothing making the no-throw case fail. */
function assertingCatches(text: string, name: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\}\s*catch\s*(?:\(\s*\w+\s*\))?\s*\{/g)) {
    const open = m.index + m[0].length - 1;
    const end = closing(text, open);
    const body = text.slice(open, end);
    if (!/\bexpect\(/.test(body)) continue;
    if (/\bthrow\b/.test(body)) continue;
    if (/^\s*throw\b/.test(text.slice(end))) continue;
    out.push(`${name}:${text.slice(0, m.index).split('\n').length}`);
  }
  return out;
}

describe('assertions outside catch blocks', () => {
  it('the rule finds an asserting catch and accepts the helper pattern', () => {
    expect(assertingCatches('try {\n  f();\n} catch (e) {\n  expect(e).toBe(1);\n}\n', 'x')).toEqual(['x:3']);
    expect(assertingCatches('try {\n  f();\n  expect.unreachable();\n} catch (e) {\n  expect(e).toBe(1);\n}\n', 'x')).toEqual(['x:4']);
    expect(assertingCatches('try {\n  f();\n} catch (e) {\n  expect(e).toBe(1);\n  return e;\n}\nthrow new Error("no");\n', 'x')).toEqual([]);
    expect(assertingCatches('try {\n  f();\n} catch {\n  n++;\n}\n', 'x')).toEqual([]);
  });

  it('no test file asserts only inside a catch', () => {
    const self = relative(TEST, import.meta.filename);
    const found = files(TEST).filter((f) => relative(TEST, f) !== self).flatMap((f) => assertingCatches(readFileSync(f, 'utf8'), relative(TEST, f)));
    expect(found).toEqual([]);
  });
});
