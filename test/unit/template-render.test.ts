import { describe, expect, it } from 'vitest';
import { TsbmError } from '../../src/errors.js';
import { renderString, renderText, renderValue } from '../../src/template/index.js';
import type { TemplateContext } from '../../src/template/types.js';

const pos = { file: 'play.yml', line: 7, col: 12 };
const ctx = (vars: Record<string, unknown> = {}, extra: Partial<TemplateContext> = {}): TemplateContext => ({
  vars,
  baseDir: `${import.meta.dirname}/../fixtures/template`,
  pos,
  task: 'install',
  host: 'node01',
  ...extra,
});

function err(fn: () => unknown): TsbmError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(TsbmError);
    return e as TsbmError;
  }
  throw new Error('expected a TsbmError');
}

describe('renderString', () => {
  const vars = { n: 3, b: false, s: 'x', xs: [1, 'a'], o: { a: { b: 'deep' } }, nul: null };

  it('returns strings without braces as is', () => {
    expect(renderString('plain {text}', ctx())).toBe('plain {text}');
  });

  it('accepts {{var}} and {{ var }} and dotted paths', () => {
    expect(renderString('{{s}}-{{ s }}-{{ o.a.b }}', ctx(vars))).toBe('x-x-deep');
  });

  it('keeps the type of a single expression', () => {
    expect(renderString('{{ n }}', ctx(vars))).toBe(3);
    expect(renderString('{{b}}', ctx(vars))).toBe(false);
    expect(renderString('{{ xs }}', ctx(vars))).toEqual([1, 'a']);
    expect(renderString('{{o.a}}', ctx(vars))).toEqual({ b: 'deep' });
    expect(renderString('{{ nul }}', ctx(vars))).toBeNull();
    expect(renderString('{{ len xs }}', ctx(vars))).toBe(2);
    expect(renderString('{{ from_json \'{"k":[1]}\' }}', ctx(vars))).toEqual({ k: [1] });
  });

  it('renders mixed text as a string, lists and maps as JSON', () => {
    expect(renderString('n={{n}} xs={{xs}}', ctx(vars))).toBe('n=3 xs=[1,"a"]');
    expect(renderText('{{ n }}', ctx(vars))).toBe('3');
  });

  it('does not HTML-escape', () => {
    expect(renderString('<{{s}}>&{{ q }}', ctx({ s: '<b>', q: '"&' }))).toBe('<<b>>&"&');
  });

  it('renders deeply and leaves non-strings alone', () => {
    const out = renderValue({ a: ['{{n}}', { b: '{{s}}!' }], c: 5, d: true, e: null }, ctx(vars));
    expect(out).toEqual({ a: [3, { b: 'x!' }], c: 5, d: true, e: null });
  });

  it('loops with #each, block params, @index and root fallback', () => {
    const v = { disks: [{ name: 'sda' }, { name: 'sdb' }], host: 'h' };
    expect(renderString('{{#each disks}}{{@index}}:{{name}}@{{host}} {{/each}}', ctx(v))).toBe(
      '0:sda@h 1:sdb@h ',
    );
    expect(renderString('{{#each disks as |d|}}{{d.name}}{{/each}}', ctx(v))).toBe('sdasdb');
  });

  it('../ works inside blocks only', () => {
    expect(renderString('{{#each xs}}{{../n}}{{/each}}', ctx({ xs: [1, 2], n: 7 }))).toBe('77');
    expect(err(() => renderString('{{ ../n }}', ctx({ n: 1 }))).message).toContain('reaches above');
    expect(err(() => renderString('{{#each xs}}{{../nope}}{{/each}}', ctx({ xs: [1] }))).message).toContain(
      'undefined variable "../nope"',
    );
  });

  it('names an undefined variable, the task, the host and the position', () => {
    const e = err(() => renderString('ip: {{ bmc.address }}', ctx({ bmc: {} })));
    expect(e.kind).toBe('template');
    expect(e.message).toContain('undefined variable "bmc.address"');
    expect(e.message).toContain('install');
    expect(e.host).toBe('node01');
    expect(e.task).toBe('install');
    expect(e.pos).toEqual(pos);
    expect(e.hint).toMatch(/default/);
    expect(e.oneLine()).toMatch(/^play\.yml:7:12: /);
  });

  it('reports undefined variables used as helper arguments', () => {
    expect(err(() => renderString('{{ eq missing 1 }}', ctx())).message).toContain(
      'undefined variable "missing"',
    );
    expect(err(() => renderString('{{#if missing}}x{{/if}}', ctx())).message).toContain('"missing"');
  });

  it('does not expose prototype properties', () => {
    expect(err(() => renderString('{{ constructor }}', ctx())).message).toContain('undefined variable');
    expect(err(() => renderString('{{ o.__proto__ }}', ctx({ o: {} }))).message).toContain(
      'undefined variable',
    );
  });

  it('reports syntax errors and unknown helpers as template errors with the position', () => {
    const e = err(() => renderString('{{ foo ', ctx({ foo: 1 })));
    expect(e.kind).toBe('template');
    expect(e.message).toMatch(/template syntax error/);
    expect(e.pos).toEqual(pos);
    expect(err(() => renderString('{{ frob 1 }}', ctx())).message).toContain('unknown helper "frob"');
    expect(err(() => renderString('{{> partial }}', ctx())).message).toContain('partials');
    expect(err(() => renderString('{{log 1}}', ctx())).message).toContain('unknown helper "log"');
  });
});

describe('numeric path segments', () => {
  const vars = { names: ['a', 'b'], disks: [{ name: 'sda', parts: ['p1', 'p2'] }], grid: [[1, 2], [3, 4]] };

  it('reads {{ list.0 }} as the first element, as {{ disks.0.name }} already was', () => {
    expect(renderString('{{ names.0 }}', ctx(vars))).toBe('a');
    expect(renderString('{{names.1}}', ctx(vars))).toBe('b');
    expect(renderString('{{ disks.0.name }}', ctx(vars))).toBe('sda');
    expect(renderString('{{ disks.0.parts.1 }}', ctx(vars))).toBe('p2');
    expect(renderString('{{ grid.1.0 }}', ctx(vars))).toBe(3);
    expect(renderString('first={{ names.0 }}, second={{~ names.1 ~}}!', ctx(vars))).toBe('first=a, second=b!');
  });

  it('works as a helper argument and in a condition', () => {
    expect(renderString('{{ eq names.0 "a" }}', ctx(vars))).toBe(true);
    expect(renderString('{{ default names.5 "none" }}', ctx(vars))).toBe('none');
    expect(renderString('{{#if names.1}}yes{{/if}}', ctx(vars))).toBe('yes');
  });

  it('keeps number literals numbers', () => {
    expect(renderString('{{ gt 2 1.5 }}', ctx(vars))).toBe(true);
    expect(renderString('{{ default missing 0 }}', ctx(vars))).toBe(0);
  });

  it('names the missing path when the index is out of range', () => {
    expect(err(() => renderString('{{ names.7 }}', ctx(vars))).message).toMatch(/names\.7/);
  });
});
