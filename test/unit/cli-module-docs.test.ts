import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { argDocs, moduleDocText, moduleListText, typeText } from '../../src/cli/module-docs.js';
import { modulesCommand } from '../../src/cli/modules-command.js';
import type { TsbmError } from '../../src/errors.js';
import { allModules } from '../../src/modules/registry.js';
import { defineModule } from '../../src/module-api/types.js';
import { thrownBy } from '../helpers/thrown.js';

const sample = defineModule({
  name: 'sample_power',
  summary: 'Set the power state',
  description: 'Asks the BMC to change the power state and waits until it reads back.',
  runsOn: 'controller',
  checkMode: true,
  example: '- sample_power:\n    state: "off"\n',
  args: Type.Object({
    state: Type.Union([Type.Literal('on'), Type.Literal('off'), Type.Literal('reset')], { description: 'Wanted state' }),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, default: 443 })),
    wait: Type.Optional(
      Type.Object({
        timeout: Type.Integer({ minimum: 1, description: 'Seconds' }),
        interval: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
      }),
    ),
    keys: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())], { examples: [['ssh-ed25519 AAA']] })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    disks: Type.Optional(Type.Array(Type.Object({ name: Type.String({ pattern: '^/dev/' }) }))),
    url: Type.Optional(Type.String({ format: 'uri' })),
  }),
  run: async () => ({ changed: false }),
});

describe('module docs from schemas', () => {
  it('renders types readably', () => {
    expect(typeText(Type.Union([Type.Literal('a'), Type.Literal(2)]))).toBe('"a" | 2');
    expect(typeText(Type.Integer({ minimum: 1 }))).toBe('integer ≥ 1');
    expect(typeText(Type.Number({ maximum: 5 }))).toBe('number ≤ 5');
    expect(typeText(Type.Number({ exclusiveMinimum: 0, maximum: 5 }))).toBe('number > 0, ≤ 5');
    expect(typeText(Type.Array(Type.Union([Type.String(), Type.Number()])))).toBe('list of (string | number)');
    expect(typeText(Type.Record(Type.String(), Type.Integer()))).toBe('map of string to integer');
    expect(typeText({})).toBe('any');
  });

  it('lists every argument with nested paths, required flags and defaults', () => {
    expect(argDocs(sample.args).map((a) => [a.path, a.type, a.required, a.default])).toEqual([
      ['state', '"on" | "off" | "reset"', true, undefined],
      ['port', 'integer 1..65535', false, 443],
      ['wait', 'object', false, undefined],
      ['wait.timeout', 'integer ≥ 1', true, undefined],
      ['wait.interval', 'number > 0', false, undefined],
      ['keys', 'string | list of string', false, undefined],
      ['headers', 'map of string to string', false, undefined],
      ['disks', 'list of object', false, undefined],
      ['disks[].name', 'string (pattern ^/dev/)', true, undefined],
      ['url', 'string (format uri)', false, undefined],
    ]);
  });

  it('prints the full reference with the example', () => {
    const text = moduleDocText(sample as never);
    expect(text).toContain('sample_power - Set the power state');
    expect(text).toContain('Runs on: the controller');
    expect(text).toContain('  state: "on" | "off" | "reset"  [required]\n      Wanted state');
    expect(text).toContain('  port: integer 1..65535  [default: 443]');
    expect(text).toContain('      e.g. ["ssh-ed25519 AAA"]');
    expect(text).toMatch(/EXAMPLE\n {2}- sample_power:\n {6}state: "off"\n$/);
  });

  it('lists modules in a table', () => {
    expect(moduleListText([sample as never])).toBe(
      'MODULE        RUNS ON     SUMMARY\nsample_power  controller  Set the power state\n\nDetails: tsbm modules NAME\n',
    );
  });

  it('documents every registered module and suggests a name for typos', () => {
    for (const m of allModules()) {
      const text = modulesCommand(m.name, false);
      expect(text).toContain(`${m.name} - ${m.summary}`);
      expect(JSON.parse(modulesCommand(m.name, true))).toMatchObject({ type: 'object' });
    }
    const first = allModules()[0];
    if (first) {
      const e = thrownBy(() => modulesCommand(`${first.name}x`, false));
      expect((e as TsbmError).exitCode).toBe(5);
      expect((e as TsbmError).message).toContain(`did you mean "${first.name}"`);
    }
  });
});
