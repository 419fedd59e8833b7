// Every precedence level against the one just below it, through the executor:
// role defaults < inventory < play vars < vars_files < role vars < block vars (outer < inner)
// < task vars < registered/set_fact < extra vars.
import { describe, expect, it } from 'vitest';
import type { RoleContext } from '../../src/playbook/model.js';
import type { Vars } from '../../src/types.js';
import { composeVars } from '../../src/executor/vars.js';
import { block, play, playbook, runModel, task } from '../helpers/executor-model.js';

const LEVELS = [
  'role_defaults',
  'inventory',
  'play_vars',
  'vars_files',
  'role_vars',
  'outer_block',
  'inner_block',
  'task_vars',
  'set_fact',
  'extra_vars',
] as const;
type Level = (typeof LEVELS)[number];

/** Runs a playbook where `v` is set at the given levels (to the level's name) and returns what a task sees. */
async function seen(levels: readonly Level[]): Promise<unknown> {
  const at = (l: Level): Vars => (levels.includes(l) ? { v: l } : {});
  const role: RoleContext = { name: 'r', path: '/pb/roles/r', defaults: at('role_defaults'), vars: at('role_vars') };
  const show = task('debug', { msg: '{{ v }}' }, { name: 'show', vars: at('task_vars'), role });
  const setFact = levels.includes('set_fact') ? [task('set_fact', { v: 'set_fact' }, { name: 'sf' })] : [];
  const pb = playbook(
    play([...setFact, block({ block: [block({ block: [show] }, { vars: at('inner_block') })] }, { vars: at('outer_block') })], {
      vars: at('play_vars'),
      varsFiles: [{ other: 1 }, at('vars_files')],
    }),
  );
  const r = await runModel(pb, {
    inventory: { hosts: { node1: at('inventory') } },
    options: { extraVars: at('extra_vars') },
  });
  return r.resultOf('node1', 'show')?.result?.msg;
}

describe('variable precedence, level by level', () => {
  it('role defaults alone are visible', async () => {
    expect(await seen(['role_defaults'])).toBe('role_defaults');
  });
  for (let i = 1; i < LEVELS.length; i++) {
    const lower = LEVELS[i - 1]!;
    const higher = LEVELS[i]!;
    it(`${higher} beats ${lower}`, async () => {
      expect(await seen([lower, higher])).toBe(higher);
    });
  }
  it('everything set: extra vars win', async () => {
    expect(await seen(LEVELS)).toBe('extra_vars');
  });
  it('registered results sit at the set_fact level: above task vars, below extra vars', async () => {
    const reg = task('set_fact', { x: 1 }, { name: 'reg', register: 'v' });
    const show = task('debug', { msg: '{{ v.changed }}' }, { name: 'show', vars: { v: { changed: 'task' } } });
    const r = await runModel(playbook(play([reg, show])));
    expect(r.resultOf('node1', 'show')!.result!.msg).toBe(false);
    const r2 = await runModel(playbook(play([reg, task('debug', { msg: '{{ v }}' }, { name: 'show' })])), {
      options: { extraVars: { v: 'extra' } },
    });
    expect(r2.resultOf('node1', 'show')!.result!.msg).toBe('extra');
  });
});

describe('composeVars, magic vars, hostvars and lazy templating', () => {
  it('later vars_files win over earlier ones', () => {
    const v = composeVars({ inventory: {}, play: {}, varsFiles: [{ a: 1 }, { a: 2 }], blocks: [], task: {}, facts: {}, extra: {}, magic: {} });
    expect(v.a).toBe(2);
  });
  it('magic vars cannot be overridden', () => {
    const v = composeVars({
      inventory: {},
      play: { inventory_hostname: 'fake' },
      varsFiles: [],
      blocks: [],
      task: {},
      facts: {},
      extra: { inventory_hostname: 'fake' },
      magic: { inventory_hostname: 'real' },
    });
    expect(v.inventory_hostname).toBe('real');
  });
  it('hostvars shows other hosts (inventory vars and facts), playbook_dir is set', async () => {
    const r = await runModel(
      playbook(
        play([
          task('set_fact', { f: 'fact-{{ inventory_hostname }}' }),
          task('debug', { msg: '{{ hostvars.b.color }} {{ hostvars.b.f }} {{ playbook_dir }}' }, { name: 'd' }),
        ]),
      ),
      { inventory: { hosts: { a: { color: 'red' }, b: { color: 'blue' } } } },
    );
    expect(r.resultOf('a', 'd')!.result!.msg).toBe('blue fact-b /pb');
  });
  it('hostvars sees facts set after an earlier look in the same play', async () => {
    const look = (n: string) => task('debug', { msg: '{{ default hostvars.b.late "unset" }}' }, { name: n });
    const r = await runModel(playbook(play([look('d1'), task('set_fact', { late: 'now' }), look('d2')])), {
      inventory: { hosts: { a: {}, b: {} } },
    });
    expect(r.resultOf('a', 'd1')!.result!.msg).toBe('unset');
    expect(r.resultOf('a', 'd2')!.result!.msg).toBe('now');
  });
  it('vars referring to vars are rendered when used, keeping types', async () => {
    const r = await runModel(
      playbook(play([task('debug', { msg: '{{ a }}' }, { name: 'd' })], { vars: { a: '{{ b }}', b: '{{ c }}', c: [1, 2] } })),
    );
    expect(r.resultOf('node1', 'd')!.result!.msg).toEqual([1, 2]);
  });
  it('a self-referencing var is an error, not a hang', async () => {
    const r = await runModel(playbook(play([task('debug', { msg: '{{ a }}' }, { name: 'd' })], { vars: { a: '{{ a }}' } })));
    expect(r.resultOf('node1', 'd')!.status).toBe('failed');
    expect(r.resultOf('node1', 'd')!.msg).toContain("'a' refers to itself");
  });
});
