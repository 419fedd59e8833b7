import { describe, expect, it } from 'vitest';
import { TsbmError } from '../../src/errors.js';
import { cmd, play, playbook, runModel, task } from '../helpers/executor-model.js';
import { executePlaybook } from '../../src/executor/engine.js';
import { EventBus, type TsbmEvent } from '../../src/output/events.js';
import { Redactor } from '../../src/output/redact.js';
import type { RunHooks } from '../../src/executor/deps.js';
import { baseOptions, fakeInventory } from '../helpers/executor-model.js';
import { fakeLab } from '../helpers/fake-connection.js';
import type { Playbook } from '../../src/playbook/model.js';

async function withHooks(pb: Playbook, hooks: RunHooks) {
  const bus = new EventBus();
  const events: TsbmEvent[] = [];
  bus.on((e) => events.push(e));
  const lab = fakeLab();
  const code = await executePlaybook(pb, baseOptions(), {
    bus,
    redactor: new Redactor(),
    connect: lab.factory,
    inventory: fakeInventory({ hosts: { a: {}, b: {} } }),
    loadTaskFile: () => [],
    hooks,
    runId: 'run-123',
  });
  return { code, events, lab };
}

describe('executor: journal and resume hooks', () => {
  it('awaits beforeTask before each task on each host', async () => {
    const seen: string[] = [];
    const r = await withHooks(playbook(play([cmd('echo 1'), cmd('echo 2')])), {
      beforeTask: async (h, id) => {
        seen.push(`${h}@${id}`);
      },
    });
    expect(r.code).toBe(0);
    expect(seen).toHaveLength(4);
    expect(r.events[0]).toMatchObject({ type: 'run_start', runId: 'run-123' });
  });

  it('a failing barrier stops the run before more remote work, with its exit code', async () => {
    let n = 0;
    const r = await withHooks(playbook(play([cmd('echo 1'), cmd('echo 2')])), {
      beforeTask: async () => {
        if (++n > 2) throw new TsbmError('runtime', 'journal: disk full');
      },
    });
    expect(r.lab.calls.map((c) => c.argv.join(' '))).toEqual(['echo 1', 'echo 1']);
    expect(r.code).toBe(1);
    expect(r.events.some((e) => e.type === 'warning' && e.message.includes('disk full'))).toBe(true);
  });

  it('resume: restores registered vars, skips completed tasks, re-runs `resume: rerun` ones while target work remains', async () => {
    const first = cmd('echo first', { register: 'f' });
    const again = cmd('echo again', { resume: 'rerun' });
    const show = task('debug', { msg: '{{ f.stdout }}' }, { name: 'show' });
    const later = cmd('echo later');
    const r = await withHooks(playbook(play([first, again, show, later])), {
      restore: (h) => (h === 'a' ? { f: { stdout: 'from before', changed: true, failed: false } } : undefined),
      completed: (h, id) => h === 'a' && (id === first.id || id === again.id),
    });
    expect(r.lab.calls.map((c) => `${c.host}:${c.argv.join(' ')}`).sort()).toEqual([
      'a:echo again',
      'a:echo later',
      'b:echo again',
      'b:echo first',
      'b:echo later',
    ]);
    const shown = r.events.find((e) => e.type === 'host_result' && e.host === 'a' && e.task === 'show');
    expect((shown as unknown as { result: { msg: string } }).result.msg).toBe('from before');
  });

  it('resume: a `resume: rerun` task stays skipped when no target work is left after it', async () => {
    const again = cmd('echo again', { resume: 'rerun' });
    const done = cmd('echo done');
    const show = task('debug', { msg: 'controller only' }, { name: 'show' });
    const r = await withHooks(playbook(play([again, done, show])), {
      completed: (h, id) => h === 'a' && (id === again.id || id === done.id),
    });
    expect(r.lab.calls.map((c) => `${c.host}:${c.argv.join(' ')}`).sort()).toEqual(['b:echo again', 'b:echo done']);
  });
});

it('runModel helper still works alongside (sanity)', async () => {
  const r = await runModel(playbook(play([cmd('echo x')])));
  expect(r.code).toBe(0);
});
