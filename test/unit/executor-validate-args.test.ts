import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { validateArgs } from '../../src/executor/validate-args.js';
import { defineModule } from '../../src/module-api/types.js';
import type { Task } from '../../src/playbook/model.js';

const mod = defineModule({
  name: 'demo',
  summary: 'demo',
  runsOn: 'controller',
  checkMode: true,
  example: '',
  args: Type.Object({ timeout: Type.Integer({ minimum: 1 }), wait: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
  run: async () => ({ changed: false }),
});
const pos = { file: 'p.yml', line: 3, col: 5 };
const task = { name: 'Wait', argsPos: pos } as unknown as Task;

describe('module argument validation at run time', () => {
  it('converts "5" and "true" as Ansible does (templates and -e k=v give strings)', () => {
    const args: Record<string, unknown> = { timeout: '5', wait: 'true' };
    validateArgs(mod, args, task, 'node1');
    expect(args).toEqual({ timeout: 5, wait: true });
  });

  it('still refuses what cannot be converted, naming the value once with its position', () => {
    const args = { timeout: 'soon' };
    let err: unknown;
    try {
      validateArgs(mod, args, task, 'node1');
    } catch (e) {
      err = e;
    }
    expect(String((err as Error).message)).toBe('demo: argument timeout must be integer');
    expect((err as { pos: unknown }).pos).toEqual(pos);
    expect(args).toEqual({ timeout: 'soon' });
  });
});
