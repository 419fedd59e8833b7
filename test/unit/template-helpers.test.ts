import { homedir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { TsbmError } from '../../src/errors.js';
import { HELPERS, renderString } from '../../src/template/index.js';
import type { TemplateContext } from '../../src/template/types.js';

const baseDir = `${import.meta.dirname}/../fixtures/template`;
const ctx = (vars: Record<string, unknown> = {}, onSecret?: (v: string) => void): TemplateContext => ({
  vars,
  baseDir,
  ...(onSecret ? { onSecret } : {}),
});
const r = (s: string, vars: Record<string, unknown> = {}) => renderString(s, ctx(vars));
const fails = (s: string, vars: Record<string, unknown> = {}): TsbmError => {
  try {
    r(s, vars);
  } catch (e) {
    expect(e).toBeInstanceOf(TsbmError);
    expect((e as TsbmError).kind).toBe('template');
    return e as TsbmError;
  }
  throw new Error(`expected ${s} to fail`);
};

describe('helpers', () => {
  it('default and defined tolerate undefined arguments', () => {
    expect(r('{{ default missing "x" }}')).toBe('x');
    expect(r('{{ default missing.deep 4 }}')).toBe(4);
    expect(r('{{ default v "x" }}', { v: 'set' })).toBe('set');
    expect(r('{{ default v "x" }}', { v: null })).toBe('x');
    expect(r('{{ default v "x" true }}', { v: '' })).toBe('x');
    expect(r('{{ defined missing }}')).toBe(false);
    expect(r('{{ defined v }}', { v: 0 })).toBe(true);
    expect(r('{{ not (defined missing) }}')).toBe(true);
  });

  it('compares', () => {
    expect(r("{{ eq s 'On' }}", { s: 'On' })).toBe(true);
    expect(r('{{ eq n "1" }}', { n: 1 })).toBe(true);
    expect(r('{{ ne n 2 }}', { n: 1 })).toBe(true);
    expect(r('{{ lt 1 2 }}{{ le 2 2 }}{{ gt 1 2 }}{{ ge 3 2 }}')).toBe('truetruefalsetrue');
    expect(r('{{ lt "a" "b" }}')).toBe(true);
    expect(fails('{{ lt 1 (split "a") }}').message).toContain('cannot compare');
  });

  it('and / or / not use Ansible truthiness', () => {
    expect(r('{{ and 1 "yes" }}')).toBe(true);
    expect(r('{{ and 1 "no" }}')).toBe(false);
    expect(r('{{ or 0 "off" xs }}', { xs: [] })).toBe(false);
    expect(r('{{ not "false" }}')).toBe(true);
  });

  it('contains / len', () => {
    expect(r('{{ contains xs 2 }}', { xs: [1, 2] })).toBe(true);
    expect(r('{{ contains "abc" "b" }}')).toBe(true);
    expect(r('{{ contains m "k" }}', { m: { k: 1 } })).toBe(true);
    expect(r('{{ len m }}', { m: { a: 1, b: 2 } })).toBe(2);
    expect(fails('{{ len 5 }}').message).toContain('len');
  });

  it('string helpers', () => {
    expect(r('{{ join xs "-" }}', { xs: ['a', 'b'] })).toBe('a-b');
    expect(r('{{ split "a,b" "," }}')).toEqual(['a', 'b']);
    expect(r('{{ lower "AbC" }}{{ upper "x" }}')).toBe('abcX');
    expect(r('{{ trim "  x " }}')).toBe('x');
    expect(r('{{ replace "a-b-c" "-" "_" }}')).toBe('a_b_c');
    expect(r('{{ regex_match "sda1" "^sd[a-z]\\d$" }}')).toBe(true);
    expect(r('{{ regex_match "nvme0n1" "^sd" }}')).toBe(false);
    expect(fails('{{ regex_match "x" "(" }}').message).toContain('bad regular expression');
  });

  it('data helpers', () => {
    expect(r('{{ json m }}', { m: { a: [1] } })).toBe('{"a":[1]}');
    expect(r('{{ from_json "[1,2]" }}')).toEqual([1, 2]);
    expect(fails('{{ from_json "{nope" }}').message).toContain('invalid JSON');
    expect(r('{{ yaml m }}', { m: { a: 1 } })).toBe('a: 1\n');
    expect(r('{{ b64encode "hi" }}')).toBe('aGk=');
    expect(r('{{ b64decode "aGk=" }}')).toBe('hi');
    expect(fails('{{ b64decode "*!" }}').message).toContain('base64');
  });

  it('env with and without a default', () => {
    process.env.TSBM_TEST_ENV = 'val';
    expect(r('{{ env "TSBM_TEST_ENV" }}')).toBe('val');
    expect(r('{{ env "TSBM_TEST_UNSET_XYZ" "dflt" }}')).toBe('dflt');
    const e = fails('{{ env "TSBM_TEST_UNSET_XYZ" }}');
    expect(e.message).toContain('TSBM_TEST_UNSET_XYZ is not set');
    expect(e.hint).toContain('default');
  });

  it('file reads relative to baseDir and strips trailing newlines', () => {
    expect(r('{{ file "key.pub" }}')).toBe('ssh-ed25519 AAAAkey user@host');
    expect(fails('{{ file "missing.pub" }}').message).toContain('file not found');
    // ~ expands to the home directory (the error shows the expanded path)
    expect(fails('{{ file "~/tsbm-no-such-file" }}').message).toContain(homedir());
  });

  it('secret hands the value to onSecret and returns it', () => {
    const seen: string[] = [];
    expect(
      renderString(
        '{{ secret pw }}',
        ctx({ pw: 'hunter22' }, (v) => seen.push(v)),
      ),
    ).toBe('hunter22');
    expect(seen).toEqual(['hunter22']);
  });

  it('values read through secret-looking names are reported to onSecret', () => {
    const seen: string[] = [];
    const v = { driver_info: { redfish_password: 'calvin1' }, bmc: { token: 'tok123' }, user: 'admin' };
    renderString(
      '{{ driver_info.redfish_password }} {{ user }} {{ len bmc.token }}',
      ctx(v, (s) => seen.push(s)),
    );
    expect(seen).toEqual(['calvin1', 'tok123']);
  });

  it('now and uuid', () => {
    expect(Date.parse(r('{{ now }}') as string)).not.toBeNaN();
    expect(r('{{ uuid }}')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('every documented helper exists', () => {
    const names = HELPERS.map((h) => h.name);
    for (const n of 'default eq ne lt le gt ge and or not contains defined len join split lower upper trim replace regex_match json from_json yaml b64encode b64decode env file secret now uuid'.split(
      ' ',
    ))
      expect(names).toContain(n);
  });
});
