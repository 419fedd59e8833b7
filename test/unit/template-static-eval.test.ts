// StaticEvaluator: templates evaluated against what is known before a run. Each case is checked
// against the real renderer too, so the static verdict is the run's verdict.
import { describe, expect, it } from 'vitest';
import { MISSING, missMessage, StaticEvaluator, type StaticView, UNKNOWN } from '../../src/template/static-eval.js';
import { checkTemplateSyntax } from '../../src/template/analyze.js';
import { evalCondition, renderString } from '../../src/template/index.js';
import { lazyVars } from '../../src/executor/lazy-vars.js';

const VARS: Record<string, unknown> = {
  instance_info: { image_source: 'oci://r/os:1', root_device: { name: '/dev/vda' }, hostname: '{{ inventory_hostname }}' },
  instance_iso: '{{ instance_info.boot_iso }}',
  alias: '{{ instance_info }}',
  mixed: 'prefix {{ instance_info.image_source }}',
  inventory_hostname: 'node01',
  kind: 'iso',
  list: ['a', 'b'],
  disks: [{ name: 'vda' }],
  text: 'abc',
  nothing: null,
  self: '{{ self }}',
};
/** Names only the run knows (a registered result). */
const RUNTIME = new Set(['power']);

function evaluator(vars: Record<string, unknown> = VARS, views: Record<string, StaticView> = {}): StaticEvaluator {
  return new StaticEvaluator({
    root: (n) => (RUNTIME.has(n) ? UNKNOWN : n in views ? views[n] : Object.hasOwn(vars, n) ? vars[n] : MISSING),
  });
}

/** A value for what only the run knows, for the real renderer. */
const RUN = { power: { rc: 0, state: 'On' } };

/** What the real renderer says for the same template (with the run's values): ok or the error. */
function actual(t: string, vars: Record<string, unknown> = VARS): string {
  try {
    renderString(t, { vars: lazyVars({ ...vars, ...RUN }, { baseDir: '.' }), baseDir: '.' });
    return 'ok';
  } catch (e) {
    return (e as Error).message;
  }
}

function misses(t: string, vars?: Record<string, unknown>): string[] {
  const ev = evaluator(vars);
  ev.value(t);
  return ev.misses.map((m) => `${missMessage(m)}${m.via.length ? ` via ${m.via.join('>')}` : ''}`);
}

describe('StaticEvaluator: reads followed to the last key', () => {
  it.each([
    ['{{ instance_info.image_source }}', []],
    ['{{ instance_info.boot_iso }}', ['undefined variable "instance_info.boot_iso"']],
    ['{{ instance_info.root_device.name.x }}', ['undefined variable "instance_info.root_device.name.x"']],
    ['{{ nosuch.key }}', ['undefined variable "nosuch.key" ("nosuch" is not defined)']],
    ['{{ text.length }}', []],
    ['{{ list.length }}', []],
    ['{{ nothing.key }}', ['undefined variable "nothing.key"']],
    ['{{ alias.image_source }}', []],
    ['{{ alias.boot_iso }}', ['undefined variable "alias.boot_iso"']],
  ])('%s', (t, want) => {
    expect(misses(t)).toEqual(want);
    expect(actual(t).startsWith(want[0] ?? 'ok')).toBe(true);
  });

  it('follows values that are templates themselves, naming the variable read through', () => {
    expect(misses('{{ instance_iso }}')).toEqual(['undefined variable "instance_info.boot_iso" via instance_iso']);
    expect(actual('{{ instance_iso }}')).toMatch(/^undefined variable "instance_info.boot_iso"/);
    expect(misses('{{ mixed }}')).toEqual([]);
  });

  it('a whole variable is rendered when any part of it is read, as the executor does', () => {
    const vars = { ...VARS, info: { good: 1, bad: '{{ undefined_thing }}' } };
    expect(misses('{{ info.good }}', vars)).toEqual(['undefined variable "undefined_thing" via info']);
    expect(actual('{{ info.good }}', vars)).toMatch(/undefined variable "undefined_thing"/);
  });

  it('does not follow what only the run knows (registered results, env, file)', () => {
    expect(misses('{{ power.state.whatever }}')).toEqual([]);
    const v = { ...VARS, secret_pw: '{{ env "NO_SUCH_ENV_VAR_TSBM" }}', key: '{{ file "/no/such" }}' };
    expect(misses('{{ secret_pw }} {{ key }}', v)).toEqual([]);
  });

  it('a variable that refers to itself is left to the run (which names it)', () => {
    expect(misses('{{ self }}')).toEqual([]);
  });
});

describe('StaticEvaluator: guards the run honours are honoured', () => {
  it.each([
    '{{ default instance_info.boot_iso "x" }}',
    '{{ default nosuch.deeper.key "x" }}',
    '{{#if (defined instance_info.boot_iso)}}{{ instance_info.boot_iso }}{{/if}}',
    '{{#unless (defined instance_info.boot_iso)}}none{{else}}{{ instance_info.boot_iso }}{{/unless}}',
    '{{#if (eq kind "disk")}}{{ instance_info.boot_iso }}{{/if}}',
    '{{#if (and (defined instance_info.boot_iso) power)}}{{ instance_info.boot_iso }}{{/if}}',
    '{{#if (or (eq kind "iso") power)}}{{ instance_info.image_source }}{{/if}}',
    '{{#each disks}}{{ name }} {{ inventory_hostname }}{{/each}}',
    '{{#each list as |x|}}{{ x.whatever }}{{/each}}',
  ])('%s', (t) => {
    expect(misses(t)).toEqual([]);
    expect(actual(t)).toBe('ok');
  });

  it('a guard the run cannot decide before (registered) keeps the read checked', () => {
    expect(misses('{{#if power}}{{ instance_info.boot_iso }}{{/if}}')).toEqual([
      'undefined variable "instance_info.boot_iso"',
    ]);
  });

  it('an #if on an undefined variable is itself an error, as at run time', () => {
    expect(misses('{{#if nosuch}}x{{/if}}')).toEqual(['undefined variable "nosuch"']);
    expect(actual('{{#if nosuch}}x{{/if}}')).toMatch(/undefined variable "nosuch"/);
  });
});

describe('StaticEvaluator: conditions', () => {
  const cases: Array<[string, boolean | typeof UNKNOWN]> = [
    ['defined instance_info.boot_iso', false],
    ['not (defined instance_info.boot_iso)', true],
    ["eq kind 'iso'", true],
    ['eq power.rc 0', UNKNOWN],
    ['and (eq kind "disk") power', false],
    ['or (eq kind "iso") power', true],
    ['{{ eq kind "iso" }}', true],
    ['false', false],
    ['len list', true],
  ];
  it.each(cases)('%s', (c, want) => {
    expect(evaluator().condition(c)).toBe(want);
    if (want !== UNKNOWN) expect(evalCondition(c, { vars: { ...VARS, ...RUN }, baseDir: '.' })).toBe(want);
  });

  it('reads in a condition are checked like any other', () => {
    const ev = evaluator();
    expect(ev.condition('eq instance_info.boot_iso "x"')).toBe(UNKNOWN);
    expect(ev.misses.map(missMessage)).toEqual(['undefined variable "instance_info.boot_iso"']);
  });
});

describe('StaticEvaluator: hostvars', () => {
  const other: StaticView = {
    staticView: true,
    get: (k) => (k === 'driver_info' ? { redfish_address: 'https://x' } : k === 'power' ? UNKNOWN : MISSING),
  };
  const hostvars: StaticView = { staticView: true, get: (h) => (h === 'node02' ? other : MISSING) };
  const check = (t: string) => {
    const ev = evaluator(VARS, { hostvars });
    ev.value(t);
    return ev.misses.map(missMessage);
  };
  it('reads another host to the last key; unknown hosts and keys are named', () => {
    expect(check('{{ hostvars.node02.driver_info.redfish_address }}')).toEqual([]);
    expect(check('{{ hostvars.node02.power.rc }}')).toEqual([]);
    expect(check('{{ hostvars.node02.driver_info.port }}')).toEqual(['undefined variable "hostvars.node02.driver_info.port"']);
    expect(check('{{ hostvars.node09.driver_info }}')).toEqual(['undefined variable "hostvars.node09.driver_info" ("hostvars.node09" is not defined)']);
  });
});

describe('checkTemplateSyntax: Jinja habits and unclosed blocks say what to write', () => {
  const pos = { file: 'p.yml', line: 3, col: 9 };
  it.each([
    ['{{ x | upper }}', false, /Jinja-style expression \{\{ x \| upper \}\}.*write \{\{ upper x \}\}/],
    ['{{ x | default("a") | lower }}', false, /write \{\{ lower \(default x "a"\) \}\}/],
    ["{{ info['key'] }}", false, /write \{\{ info\.key \}\}/],
    ['x == "a"', true, /condition syntax error: Jinja-style expression x == "a".*write eq x "a"/],
    ['x is not defined', true, /write not \(defined x\)/],
    ['item in groups', true, /write contains groups item/],
    ['{{ x }} == "a"', true, /mixes \{\{ \}\} with other text, so it would always be true.*eq x "a"/],
    ['{{#if x}}yes', false, /\{\{#if\}\} is never closed \(end the block with \{\{\/if\}\}\)/],
    ['{{#if x}}{{#each y}}a{{/each}}', false, /\{\{#if\}\} is never closed/],
  ])('%s', (src, cond, want) => {
    const e = checkTemplateSyntax(src, pos, cond);
    expect(e?.oneLine()).toMatch(want);
    expect(e?.oneLine().startsWith('p.yml:3:9: ')).toBe(true);
  });

  it('valid templates are never second-guessed', () => {
    for (const [src, cond] of [
      ['not x', true],
      ['eq x "a"', true],
      ['{{ upper x }}', false],
      ['a | b outside braces', false],
      ['{{#each l as |x|}}{{x}}{{/each}}', false],
    ] as const) {
      expect(checkTemplateSyntax(src, pos, cond), src).toBeUndefined();
    }
  });
});
