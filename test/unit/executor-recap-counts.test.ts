// The recap counts as ansible-playbook 2.14 does (test/integration/recap-differential.test.ts
// compares with the real thing; these pin each rule without it). Every result also carries the
// counts it added, and those sum to the recap.
import { describe, expect, it } from 'vitest';
import { countsFor } from '../../src/output/recap-counts.js';
import type { HostStats } from '../../src/output/events.js';
import type { Handler, RoleContext } from '../../src/playbook/model.js';
import { fakeLab, ok } from '../helpers/fake-connection.js';
import { block, cmd, handler, include, play, playbook, type RunResult, runModel, task, when } from '../helpers/executor-model.js';

const zero: HostStats = { ok: 0, changed: 0, unreachable: 0, failed: 0, skipped: 0, rescued: 0, ignored: 0 };
const stats = (s: Partial<HostStats>): HostStats => ({ ...zero, ...s });
const failOn = (word: string) => fakeLab({ respond: (c) => (c.argv.includes(word) ? { rc: 1, stdout: '', stderr: '' } : ok()) });
const twoHosts = { hosts: { a: { primary: true }, b: { primary: false } } };

/** The recap, checked against the sum of the counts on the host_result events. */
function recapOf(r: RunResult): Record<string, HostStats> {
  const summed: Record<string, HostStats> = {};
  for (const e of r.events) {
    if (e.type !== 'host_result' || !e.counts) continue;
    const s = summed[e.host] ?? stats({});
    for (const [k, v] of Object.entries(e.counts) as [keyof HostStats, number][]) s[k] += v;
    summed[e.host] = s;
  }
  const recap = r.recap();
  for (const h of Object.keys(recap)) expect(summed[h] ?? stats({}), `counts on ${h}'s results`).toEqual(recap[h]);
  return recap;
}

describe('recap counts (ansible-playbook 2.14 rules)', () => {
  it('an ignored failure counts ok and ignored, and changed when the result says changed', async () => {
    const r = await runModel(
      playbook(
        play([
          cmd('echo FAIL', { ignoreErrors: true }),
          task('fail', { msg: 'x' }, { name: 'fail', ignoreErrors: true }),
          cmd('echo FAIL quietly', { ignoreErrors: true, changedWhen: when('false') }),
        ]),
      ),
      { lab: failOn('FAIL') },
    );
    expect(recapOf(r).node1).toEqual(stats({ ok: 3, changed: 1, ignored: 3 }));
    expect(r.resultOf('node1', 'echo FAIL')!.counts).toEqual({ ok: 1, changed: 1, ignored: 1 });
    expect(r.code).toBe(0);
  });

  it('include_tasks counts ok where it includes and skipped where its when is false', async () => {
    const r = await runModel(playbook(play([include('x.yml', { name: 'inc', when: when('primary') })])), {
      inventory: twoHosts,
      loadTaskFile: () => [cmd('echo inside')],
    });
    expect(recapOf(r)).toEqual({ a: stats({ ok: 2, changed: 1 }), b: stats({ skipped: 1 }) });
    expect(r.resultOf('a', 'inc')).toMatchObject({ status: 'ok', msg: 'included: /pb/x.yml' });
    expect(r.resultOf('b', 'inc')).toMatchObject({ status: 'skipped' });
  });

  it('each host gets its own include result under the linear strategy (one loads, one fails)', async () => {
    const r = await runModel(playbook(play([include('tasks/{{ which }}.yml', { name: 'inc' })])), {
      inventory: { hosts: { a: { which: 'good' }, b: { which: 'bad' } } },
      loadTaskFile: (file) => {
        if (file.endsWith('bad.yml')) throw new Error('cannot read bad.yml');
        return [cmd('echo good')];
      },
    });
    expect(recapOf(r)).toEqual({ a: stats({ ok: 2, changed: 1 }), b: stats({ failed: 1 }) });
    expect(r.lab.argvs('a')).toEqual(['echo good']);
    expect(r.code).toBe(2);
  });

  it('a loop counts once: skipped when no item ran (or there were none), else by its result', async () => {
    const r = await runModel(
      playbook(
        play([
          task('debug', { msg: '{{ item }}' }, { name: 'none', loop: [] }),
          task('debug', { msg: '{{ item }}' }, { name: 'all skipped', loop: [1, 2], when: when('false') }),
          task('debug', { msg: '{{ item }}' }, { name: 'some', loop: [true, false], when: when('item') }),
          cmd('echo {{ item }}', { name: 'changed', loop: ['x', 'FAIL'], ignoreErrors: true }),
        ]),
      ),
      { lab: failOn('FAIL') },
    );
    expect(recapOf(r).node1).toEqual(stats({ ok: 2, changed: 1, skipped: 2, ignored: 1 }));
    expect(r.resultOf('node1', 'none')!.result).toMatchObject({ skipped: true, msg: 'No items in the list', results: [] });
  });

  it('meta tasks count nothing, not even when skipped', async () => {
    const r = await runModel(
      playbook(
        play([
          task('meta', { action: 'noop' }, { name: 'noop' }),
          task('meta', { action: 'flush_handlers' }, { name: 'skipped flush', when: when('false') }),
          task('debug', { msg: 'hi' }, { name: 'hi' }),
        ]),
      ),
    );
    expect(recapOf(r).node1).toEqual(stats({ ok: 1 }));
    expect(r.resultOf('node1', 'noop')!.counts).toEqual({});
    expect(r.resultOf('node1', 'skipped flush')).toMatchObject({ status: 'skipped', counts: {} });
  });

  it('a rescued failure counts rescued on the failing task, which reports status rescued', async () => {
    const r = await runModel(
      playbook(play([block({ block: [cmd('echo FAIL', { name: 'breaks' })], rescue: [cmd('echo saved')] })])),
      { lab: failOn('FAIL') },
    );
    expect(recapOf(r).node1).toEqual(stats({ ok: 1, changed: 1, rescued: 1 }));
    expect(r.resultOf('node1', 'breaks')).toMatchObject({ status: 'rescued', counts: { rescued: 1 } });
    expect(r.lab.argvs('node1')).toEqual(['echo FAIL', 'echo saved']);
  });

  it('run_once: only the host that ran it counts, also when its failure is rescued', async () => {
    const r = await runModel(
      playbook(
        play([
          cmd('echo once', { runOnce: true }),
          block({ block: [cmd('echo FAIL', { name: 'once fails', runOnce: true })], rescue: [task('debug', { msg: 'r' }, { name: 'r' })] }),
        ]),
      ),
      { inventory: twoHosts, lab: failOn('FAIL') },
    );
    // b is sent into the rescue too (every host the task stood for failed), uncounted.
    expect(recapOf(r)).toEqual({ a: stats({ ok: 2, changed: 1, rescued: 1 }), b: stats({ ok: 1 }) });
    expect(r.resultOf('b', 'r')!.status).toBe('ok');
  });

  it('notify by name runs one handler (the play over a role, the last loaded), and every listener', async () => {
    const role: RoleContext = { name: 'r', path: '/pb/roles/r', defaults: {}, vars: {} };
    const h = (name: string, line: string, extra: Partial<Handler> = {}, listen: string[] = []) => ({
      ...handler(name, cmd(line), [name, ...listen]),
      ...extra,
    });
    const r = await runModel(
      playbook(
        play([cmd('echo change', { notify: ['restart', 'topic'] })], {
          handlers: [
            h('restart', 'echo play-first'),
            h('restart', 'echo play-last'),
            h('restart', 'echo role', { role }),
            h('l1', 'echo l1', {}, ['topic']),
            h('l2', 'echo l2', { role }, ['topic']),
          ],
        }),
      ),
    );
    expect(r.lab.argvs('node1')).toEqual(['echo change', 'echo play-last', 'echo l1', 'echo l2']);
    expect(recapOf(r).node1).toEqual(stats({ ok: 4, changed: 4 }));
  });

  it('ignore_unreachable counts ok and ignored; an unreachable host counts once', async () => {
    const r = await runModel(
      playbook(play([cmd('echo 1', { ignoreUnreachable: true }), cmd('echo 2'), cmd('echo 3')])),
      { lab: fakeLab({ unreachable: ['node1'] }) },
    );
    expect(recapOf(r).node1).toEqual(stats({ ok: 1, ignored: 1, unreachable: 1 }));
    expect(r.code).toBe(4);
  });
});

describe('countsFor', () => {
  it('maps each status as the recap counts it', () => {
    const table = (['ok', 'changed', 'ignored', 'skipped', 'failed', 'rescued', 'unreachable'] as const).map((s) => [
      s,
      countsFor(s, false),
      countsFor(s, true),
    ]);
    expect(table).toEqual([
      ['ok', { ok: 1 }, { ok: 1 }],
      ['changed', { ok: 1, changed: 1 }, { ok: 1, changed: 1 }],
      ['ignored', { ok: 1, ignored: 1 }, { ok: 1, changed: 1, ignored: 1 }],
      ['skipped', { skipped: 1 }, { skipped: 1 }],
      ['failed', { failed: 1 }, { failed: 1 }],
      ['rescued', { rescued: 1 }, { rescued: 1 }],
      ['unreachable', { unreachable: 1 }, { unreachable: 1 }],
    ]);
  });
});
