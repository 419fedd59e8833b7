import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TsbmError } from '../../src/errors.js';
import {
  checkTemplateSyntax,
  evalCondition,
  referencedVars,
  referencedVarsInCondition,
  renderString,
  truthy,
} from '../../src/template/index.js';
import { thrownBy } from '../helpers/thrown.js';

const ctx = (vars: Record<string, unknown>) => ({
  vars,
  baseDir: '.',
  pos: { file: 'p.yml', line: 2, col: 9 },
});

describe('evalCondition', () => {
  const vars = { power_state: 'On', bootc_tpm2_luks: false, n: 0, yes: 'yes', foo: 'x' };
  it('takes bare expressions and braces', () => {
    expect(evalCondition("eq power_state 'On'", ctx(vars))).toBe(true);
    expect(evalCondition('bootc_tpm2_luks', ctx(vars))).toBe(false);
    expect(evalCondition('yes', ctx(vars))).toBe(true);
    expect(evalCondition('{{ eq power_state "Off" }}', ctx(vars))).toBe(false);
    expect(evalCondition('not (defined missing)', ctx(vars))).toBe(true);
    expect(evalCondition('and (defined foo) (eq foo "x")', ctx(vars))).toBe(true);
    expect(evalCondition(true, ctx(vars))).toBe(true);
    expect(evalCondition(false, ctx(vars))).toBe(false);
  });

  it('hints at the expression syntax for Jinja-style conditions', () => {
    for (const bad of ['foo is defined', "power_state == 'On'"]) {
      const e = thrownBy(() => evalCondition(bad, ctx(vars)));
      expect(e).toBeInstanceOf(TsbmError);
      expect((e as TsbmError).hint).toContain('eq power_state');
      expect((e as TsbmError).pos).toEqual({ file: 'p.yml', line: 2, col: 9 });
    }
  });

  it('refuses braces mixed with text (always true otherwise)', () => {
    expect(() => evalCondition("{{ power_state }} == 'Off'", ctx(vars))).toThrow(/always be true/);
  });

  it('undefined variables in conditions are errors', () => {
    expect(() => evalCondition('missing', ctx({}))).toThrow(/undefined variable "missing"/);
  });
});

describe('truthy', () => {
  it('is Ansible-like', () => {
    for (const f of [false, 0, '', 'false', 'No', 'OFF', null, undefined, [], {}])
      expect(truthy(f)).toBe(false);
    for (const t of [true, 1, 'yes', 'true', 'x', [0], { a: 1 }, -1]) expect(truthy(t)).toBe(true);
  });
});

describe('static analysis', () => {
  it('checkTemplateSyntax reports position and passes good templates', () => {
    const pos = { file: 'x.yml', line: 4, col: 3 };
    expect(checkTemplateSyntax('{{ a }} and {{#each xs}}{{this}}{{/each}}', pos)).toBeUndefined();
    const e = checkTemplateSyntax('{{ a ', pos);
    expect(e?.kind).toBe('template');
    expect(e?.pos).toEqual(pos);
    expect(checkTemplateSyntax('{{ nohelper 1 }}', pos)?.message).toContain('unknown helper');
    expect(checkTemplateSyntax("eq a 'b'", pos, true)).toBeUndefined();
  });

  it('referencedVars lists root variables only', () => {
    expect(
      referencedVars(
        '{{a.b}} {{default c 1}} {{eq d (lower e)}} {{#each f as |g|}}{{g.x}}{{h}}{{/each}} {{@root.i}} {{now}} {{this.j}} {{"lit"}} {{@index}}',
      ).sort(),
    ).toEqual(['a', 'd', 'e', 'f', 'i', 'j']);
    expect(referencedVars('no braces')).toEqual([]);
    expect(referencedVarsInCondition("eq power_state 'On'")).toEqual(['power_state']);
    expect(referencedVarsInCondition('not (defined foo)')).toEqual([]);
    expect(referencedVarsInCondition('bootc_tpm2_luks')).toEqual(['bootc_tpm2_luks']);
  });
});

describe('properties', () => {
  it('renderString never crashes: a value or a TsbmError', () => {
    const piece = fc.oneof(
      fc.string(),
      fc.constantFrom(
        '{{',
        '}}',
        '{{{',
        '}}}',
        '(',
        ')',
        '"',
        "'",
        ' ',
        'a',
        'a.b',
        '#each',
        '/each',
        '#if',
        '/if',
        '>',
        '!',
        '@index',
        'eq',
        'default',
        '..',
        '|',
        '=',
        'else',
        '~',
      ),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
        const s = parts.join('');
        // Any text either renders or is a template error (never another exception).
        let kind = 'template';
        try {
          renderString(s, ctx({ a: { b: 1 }, xs: [1] }));
        } catch (e) {
          if (!(e instanceof TsbmError)) throw e;
          kind = e.kind;
        }
        expect(kind).toBe('template');
      }),
      { numRuns: 2000 },
    );
  });

  it('static analysis never throws on arbitrary strings', () => {
    const pos = { file: 'f.yml', line: 1, col: 1 };
    fc.assert(
      fc.property(fc.string(), fc.boolean(), (s, cond) => {
        const e = checkTemplateSyntax(`{{${s}}}`, pos, cond);
        if (e) expect(e).toBeInstanceOf(TsbmError);
        expect(Array.isArray(referencedVars(`{{${s}}}`))).toBe(true);
        expect(Array.isArray(referencedVarsInCondition(s))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
