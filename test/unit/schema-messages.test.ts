import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { checkAt, compile } from '../../src/schema/ajv.js';
import { didYouMean, editDistance } from '../../src/schema/did-you-mean.js';
import { parseYamlText } from '../../src/schema/yaml-source.js';

const args = Type.Object(
  {
    state: Type.Union([Type.Literal('on'), Type.Literal('off')]),
    retries: Type.Optional(Type.Integer({ minimum: 0 })),
    wait: Type.Optional(Type.Boolean()),
    bmc_password: Type.Optional(Type.String({ minLength: 8 })),
    nested: Type.Optional(Type.Object({ size: Type.Integer() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

function check(yaml: string) {
  const src = parseYamlText(yaml, 'pb.yml');
  const err = checkAt(args, src.value, src, [], 'module redfish_power', { noun: 'argument' });
  return err ? `${err.pos?.line}:${err.pos?.col} ${err.message}` : 'ok';
}

describe('did you mean', () => {
  it('counts a swap as one edit', () => {
    expect(editDistance('retires', 'retries')).toBe(1);
    expect(editDistance('abc', 'abc')).toBe(0);
  });
  it('suggests only plausible typos, preferring swaps and dropped letters on ties', () => {
    expect(didYouMean('retires', ['retries', 'delay', 'register'])).toBe('retries');
    expect(didYouMean('resuce', ['resume', 'rescue'])).toBe('rescue');
    expect(didYouMean('taks', ['tags', 'tasks'])).toBe('tasks');
    expect(didYouMean('zzzzzz', ['retries', 'delay'])).toBeUndefined();
    expect(didYouMean('x'.repeat(5000), ['x'])).toBeUndefined();
  });
});

describe('validateAt messages', () => {
  it('positions and words each kind of problem for an operator', () => {
    expect(check('state: on\nretires: 3\n')).toBe(
      '2:1 unknown key "retires" in module redfish_power (did you mean "retries"?)',
    );
    expect(check('state: on\nretries: three\n')).toBe(
      '2:10 "retries" must be an integer, got string "three" in module redfish_power',
    );
    expect(check('wait: true\n')).toBe('1:1 missing required argument "state" for module redfish_power');
    expect(check('state: sideways\n')).toBe(
      '1:8 "state" must be one of "on", "off", got string "sideways" in module redfish_power',
    );
    expect(check('state: on\nnested: {size: 1, colour: red}\n')).toBe(
      '2:19 unknown key "colour" in "nested" of module redfish_power',
    );
    expect(check('state: on\nretries: -1\n')).toBe(
      '2:10 "retries" must be >= 0, got number -1 in module redfish_power',
    );
  });

  it('never shows the value of a secret-named key', () => {
    const msg = check('state: on\nbmc_password: hunter2\n');
    expect(msg).toContain('bmc_password');
    expect(msg).not.toContain('hunter2');
  });

  it('accepts a template string wherever a typed value is expected, but not a plain string', () => {
    expect(check('state: "{{ s }}"\nretries: "{{ n }}"\nwait: "{{ w }}"\nnested: "{{ x }}"\n')).toBe('ok');
    expect(check('state: on\nwait: "yes"\n')).toBe(
      '2:7 "wait" must be a boolean (true/false), got string "yes" in module redfish_power',
    );
  });

  it('compiles each schema once', () => {
    expect(compile(args)).toBe(compile(args));
  });
});
