// The free strategy under faults: each host at its own pace, a slow, a failing and an
// unreachable host leaving the others alone; any_errors_fatal as a barrier (no host goes past
// such a task while another host may still fail it), serial and max_fail_percentage as in the
// linear strategy.
import { describe, expect, it } from 'vitest';
import { executePlaybook } from '../../src/executor/engine.js';
import { EventBus } from '../../src/output/events.js';
import { Redactor } from '../../src/output/redact.js';
import { fakeLab, ok } from '../helpers/fake-connection.js';
import { baseOptions, block, cmd, fakeInventory, play, playbook, runModel, when } from '../helpers/executor-model.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Something one host waits for until another host reaches a point: resolves 'reached' then, or
 * 'timeout' after `ms` (a strategy that makes the hosts wait for each other deadlocks it). No
 * timing assertion: a loaded machine only makes it slower, never different.
 */
function latch(ms = 5000) {
  let open!: () => void;
  const reached = new Promise<'reached'>((r) => {
    open = () => r('reached');
  });
  let outcome: 'reached' | 'timeout' | undefined;
  return {
    open,
    wait: async () => {
      outcome = await Promise.race([reached, sleep(ms).then(() => 'timeout' as const)]);
      return outcome;
    },
    get outcome() {
      return outcome;
    },
  };
}
const fail = { rc: 1, stdout: '', stderr: 'broken' };
const four = { hosts: { fast: {}, slow: {}, failing: {}, gone: {} } };

describe('free strategy under faults', () => {
  it('a slow, a failing and an unreachable host: the fast one finishes at its own pace', async () => {
    const fastDone = latch();
    const lab = fakeLab({
      unreachable: ['gone'],
      respond: async (c) => {
        if (c.host === 'fast' && c.argv[1] === 'four') fastDone.open();
        // the slow host's first step lasts until the fast host has reached its last
        if (c.host === 'slow' && c.argv[1] === 'one') await fastDone.wait();
        if (c.host === 'failing' && c.argv[1] === 'two') return fail;
        return ok();
      },
    });
    const steps = ['one', 'two', 'three', 'four'].map((s) => cmd(`echo ${s}`));
    const r = await runModel(playbook(play(steps, { strategy: 'free' })), { inventory: four, lab });
    expect(fastDone.outcome).toBe('reached');
    expect(r.lab.argvs('slow')).toEqual(steps.map((s) => s.name));
    expect(r.lab.argvs('failing')).toEqual(['echo one', 'echo two']);
    expect(r.lab.argvs('gone')).toEqual([]);
    expect(r.recap()).toMatchObject({
      fast: { ok: 4, failed: 0, unreachable: 0 },
      slow: { ok: 4, failed: 0 },
      failing: { ok: 1, failed: 1 },
      gone: { ok: 0, unreachable: 1 },
    });
    // one result per host and task, each naming its own task
    const results = r.events.filter((e) => e.type === 'host_result');
    expect(results).toHaveLength(4 + 4 + 2 + 1);
    expect(r.code).toBe(4); // an unreachable host, as ansible-playbook
  });

  it('a failing host is rescued at its own pace while the others go on', async () => {
    const lab = fakeLab({ respond: (c) => (c.host === 'failing' && c.argv[1] === 'deploy' ? fail : ok()) });
    const pb = playbook(
      play([block({ block: [cmd('echo deploy'), cmd('echo finish')], rescue: [cmd('echo cleanup')] })], { strategy: 'free' }),
    );
    const r = await runModel(pb, { inventory: { hosts: { fast: {}, failing: {} } }, lab });
    expect(r.lab.argvs('failing')).toEqual(['echo deploy', 'echo cleanup']);
    expect(r.lab.argvs('fast')).toEqual(['echo deploy', 'echo finish']);
    expect(r.recap().failing).toMatchObject({ rescued: 1, failed: 0 });
  });
});

describe('free strategy: any_errors_fatal is a barrier', () => {
  const gate = (extra = {}) => cmd('echo check', { anyErrorsFatal: true, ...extra });

  it('a fast host that passed waits for a slow host to pass too, and goes no further when it fails', async () => {
    const lab = fakeLab({
      respond: async (c) => {
        if (c.host === 'slow' && c.argv[1] === 'check') {
          await sleep(60);
          return fail;
        }
        return ok();
      },
    });
    const r = await runModel(playbook(play([gate(), cmd('echo touch')], { strategy: 'free' })), {
      inventory: { hosts: { fast: {}, slow: {} } },
      lab,
    });
    expect(r.lab.argvs('fast')).toEqual(['echo check']);
    expect(r.lab.argvs('slow')).toEqual(['echo check']);
    expect(r.code).toBe(2);
  });

  it('when every host passes, each goes on: the fast one as soon as the slow one has passed', async () => {
    const fastDone = latch();
    const lab = fakeLab({
      respond: async (c) => {
        if (c.host === 'slow' && c.argv[1] === 'check') await sleep(40);
        if (c.host === 'fast' && c.argv[1] === 'more') fastDone.open();
        if (c.host === 'slow' && c.argv[1] === 'touch') await fastDone.wait();
        return ok();
      },
    });
    const r = await runModel(playbook(play([gate(), cmd('echo touch'), cmd('echo more')], { strategy: 'free' })), {
      inventory: { hosts: { fast: {}, slow: {} } },
      lab,
    });
    const at = (host: string, what: string) => r.lab.calls.find((c) => c.host === host && c.argv[1] === what)!.at;
    expect(at('fast', 'touch')).toBeGreaterThanOrEqual(at('slow', 'check') + 40 - 5);
    // past the barrier the pace is free again: fast finished while slow was still busy
    expect(fastDone.outcome).toBe('reached');
    expect(r.code).toBe(0);
  });

  it('a fatal task skipped by its condition holds nobody', async () => {
    const fastDone = latch(2000);
    const lab = fakeLab({
      respond: async (c) => {
        if (c.host === 'fast' && c.argv[1] === 'touch') fastDone.open();
        if (c.host === 'slow' && c.argv[1] === 'first') await fastDone.wait();
        return ok();
      },
    });
    const r = await runModel(
      playbook(play([cmd('echo first'), gate({ when: when('false') }), cmd('echo touch')], { strategy: 'free' })),
      { inventory: { hosts: { fast: {}, slow: {} } }, lab },
    );
    // fast went past the skipped task while slow was still in its first step
    expect(fastDone.outcome).toBe('reached');
    expect(r.lab.argvs('slow')).toEqual(['echo first', 'echo touch']);
  });

  it("a conditional any_errors_fatal is read with each host's variables: false holds nobody, true is a barrier", async () => {
    const run = async (knob: string) => {
      const fastDone = latch(1500);
      const lab = fakeLab({
        respond: async (c) => {
          if (c.host === 'fast' && c.argv[1] === 'touch') fastDone.open();
          if (c.host === 'slow' && c.argv[1] === 'check') await fastDone.wait();
          return ok();
        },
      });
      const r = await runModel(playbook(play([gate({ anyErrorsFatal: "eq knob 'stop'" }), cmd('echo touch')], { strategy: 'free' })), {
        inventory: { hosts: { fast: { knob }, slow: { knob } } },
        lab,
      });
      expect(r.code).toBe(0);
      return fastDone.outcome;
    };
    // continue: fast went past the check while slow was still in it
    expect(await run('continue')).toBe('reached');
    // stop: fast waited at the check until slow had passed it, so slow's wait timed out
    expect(await run('stop')).toBe('timeout');
  });

  it('a host that failed before the barrier does not hold the others', async () => {
    const lab = fakeLab({ respond: (c) => (c.host === 'early' && c.argv[1] === 'first' ? fail : ok()) });
    const r = await runModel(playbook(play([cmd('echo first'), gate(), cmd('echo touch')], { strategy: 'free' })), {
      inventory: { hosts: { early: {}, other: {} } },
      lab,
    });
    expect(r.lab.argvs('other')).toEqual(['echo first', 'echo check', 'echo touch']);
  });
});

describe('free strategy: any_errors_fatal on --resume', () => {
  it('a host whose fatal task was done in the resumed run still waits for the hosts that run it now', async () => {
    const gate = cmd('echo check', { anyErrorsFatal: true });
    const lab = fakeLab({
      respond: async (c) => {
        if (c.host === 'slow' && c.argv[1] === 'check') {
          await sleep(50);
          return fail;
        }
        return ok();
      },
    });
    const code = await executePlaybook(playbook(play([gate, cmd('echo touch')], { strategy: 'free' })), baseOptions(), {
      bus: new EventBus(),
      redactor: new Redactor(),
      connect: lab.factory,
      inventory: fakeInventory({ hosts: { fast: {}, slow: {} } }),
      loadTaskFile: () => [],
      // the killed run had finished the check on fast only
      hooks: { completed: (h, id) => h === 'fast' && id === gate.id },
      runId: 'resumed',
    });
    expect(lab.argvs('fast')).toEqual([]);
    expect(lab.argvs('slow')).toEqual(['echo check']);
    expect(code).toBe(2);
  });
});

describe('free strategy: serial and max_fail_percentage keep their meaning', () => {
  it('serial: the next batch starts when the whole batch, its slowest host included, is done', async () => {
    const h2Done = latch();
    const lab = fakeLab({
      respond: async (c) => {
        if (c.host === 'h2' && c.argv[1] === 'b') h2Done.open();
        if (c.host === 'h1' && c.argv[1] === 'a') await h2Done.wait();
        return ok();
      },
    });
    const r = await runModel(playbook(play([cmd('echo a'), cmd('echo b')], { strategy: 'free', serial: [2] })), {
      inventory: { hosts: { h1: {}, h2: {}, h3: {}, h4: {} } },
      lab,
    });
    const order = r.lab.calls.map((c) => `${c.host}:${c.argv[1]}`);
    expect(h2Done.outcome).toBe('reached'); // free inside the batch
    expect(order.indexOf('h1:b')).toBeLessThan(order.indexOf('h3:a')); // batches in turn
    expect(order).toHaveLength(8);
  });

  it('max_fail_percentage: once exceeded, no host starts another task', async () => {
    const failed = latch();
    const lab = fakeLab({
      respond: async (c) => {
        if (c.host === 'h1' && c.argv[1] === 'a') {
          setTimeout(failed.open, 20); // once h1's failure is recorded
          return fail;
        }
        if (c.argv[1] === 'a') await failed.wait(); // the others are still in their first task
        return ok();
      },
    });
    const r = await runModel(playbook(play([cmd('echo a'), cmd('echo b')], { strategy: 'free', maxFailPercentage: 20 })), {
      inventory: { hosts: { h1: {}, h2: {}, h3: {}, h4: {} } },
      lab,
    });
    expect(r.lab.calls.filter((c) => c.argv[1] === 'b')).toHaveLength(0);
    expect(r.lab.calls.filter((c) => c.argv[1] === 'a')).toHaveLength(4); // running tasks finish
  });
});
