import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseExtraVars, parseKeyValues } from '../../src/run/extra-vars.js';
import { TsbmError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-ev-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function err(f: () => unknown): TsbmError {
  try {
    f();
  } catch (e) {
    if (e instanceof TsbmError) return e;
    throw e;
  }
  throw new Error('did not throw');
}

describe('--extra-vars', () => {
  it('parses k=v pairs with quotes; values stay strings', () => {
    expect(parseKeyValues(`a=1 b="two words" c='x y' d= e=a=b f="q\\"q"`)).toEqual({
      a: '1',
      b: 'two words',
      c: 'x y',
      d: '',
      e: 'a=b',
      f: 'q"q',
    });
  });

  it('parses inline JSON and YAML flow objects with their types', () => {
    expect(parseExtraVars(['{"n": 3, "l": [1, "x"], "o": {"k": true}}'])).toEqual({ n: 3, l: [1, 'x'], o: { k: true } });
    expect(parseExtraVars(['{n: 3, s: hello}'])).toEqual({ n: 3, s: 'hello' });
  });

  it('reads @file.yml relative to cwd, later arguments win', () => {
    writeFileSync(join(dir, 'v.yml'), 'a: from-file\nb: [1, 2]\n');
    writeFileSync(join(dir, 'empty.yml'), '');
    expect(parseExtraVars(['a=first c=3', '@v.yml', 'b=last', '@empty.yml'], dir)).toEqual({ a: 'from-file', b: 'last', c: '3' });
  });

  it('names the argument in errors and exits 5', () => {
    for (const [arg, msg] of [
      ['foo', 'has no =: it is not key=value'],
      ['=x', 'starts with =: it is not key=value'],
      ['1a=x', '"1a" is not a valid variable name'],
      ['a="open', 'unterminated " quote'],
      ['{"a": 1', 'not valid JSON/YAML'],
      ['{}x: [', 'not valid JSON/YAML'],
      ['@', 'no file name after @'],
      ['  ', 'empty'],
      ['__proto__=1', '__proto__'],
    ] as const) {
      const e = err(() => parseExtraVars([arg], dir));
      expect(e.exitCode).toBe(5);
      expect(e.message).toContain(`--extra-vars`);
      expect(e.message).toContain(msg);
    }
    const list = err(() => parseExtraVars(['@list.yml'], dir));
    expect(list.message).toContain('cannot read');
    writeFileSync(join(dir, 'list.yml'), '- a\n- b\n');
    expect(err(() => parseExtraVars(['@list.yml'], dir)).message).toContain('must hold a mapping');
  });

  it('never shows a value in an error: a mistyped -e may hold a password', () => {
    for (const arg of [
      '{"bmc_password": "S3cret-pw"',
      'bmc_password="S3cret-pw',
      'bmc_password=S3cret pw',
      'S3cret-pw',
      '{"bmc_password": "S3cret-pw", "x": [}',
      'bmc_password: S3cret-pw\n  - x',
    ]) {
      const e = err(() => parseExtraVars([arg], dir));
      expect(e.exitCode).toBe(5);
      expect(`${e.message} ${e.hint ?? ''}`).not.toMatch(/S3cret|pw"/);
      expect(e.message).toMatch(/^bad --extra-vars /);
    }
    // A file name is not a secret: it is shown whole.
    expect(err(() => parseExtraVars(['@'], dir)).message).toContain('"@"');
  });

  it('points at file:line:col for YAML errors in @files', () => {
    writeFileSync(join(dir, 'bad.yml'), 'a: 1\nb: [1, 2\nc: 3\n');
    writeFileSync(join(dir, 'dup.yml'), 'a: 1\na: 2\n');
    const e = err(() => parseExtraVars(['@bad.yml'], dir));
    expect(e.exitCode).toBe(5);
    expect(e.pos?.file).toBe(join(dir, 'bad.yml'));
    expect(e.pos?.line).toBeGreaterThanOrEqual(2);
    expect(e.oneLine()).toMatch(/bad\.yml:\d+:\d+: in --extra-vars @bad\.yml: YAML syntax error/);
    const d = err(() => parseExtraVars(['@dup.yml'], dir));
    expect(d.oneLine()).toContain(`${join(dir, 'dup.yml')}:2:1: in --extra-vars @dup.yml: YAML syntax error: duplicate key`);
  });
});
