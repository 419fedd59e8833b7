// A host the run left before the end of the playbook (Ctrl-C, a stopped run) is listed in
// run_end's `unfinished` and is never shown as done by `tsbm runs show`; a host that got to the
// end before the interrupt is done. A --limit matching no host is an error (exit 1), as in
// ansible-playbook.
import { describe, expect, it } from 'vitest';
import { hostProgress } from '../../src/journal/reader.js';
import type { JournalRecord } from '../../src/journal/records.js';
import type { TsbmEvent } from '../../src/output/events.js';
import { cmd, play, playbook, runModel } from '../helpers/executor-model.js';
import { fakeLab, ok } from '../helpers/fake-connection.js';

const thirteen = () => Array.from({ length: 13 }, (_, i) => cmd(`step ${i + 1}`));
const runEnd = (events: TsbmEvent[]) => events.find((e) => e.type === 'run_end') as Extract<TsbmEvent, { type: 'run_end' }>;
const states = (events: TsbmEvent[]) => Object.fromEntries(hostProgress(events as JournalRecord[]).map((h) => [h.host, h.state]));

/** A lab that interrupts the run when `host` runs `argv`. */
function interruptAt(host: string, argv: string, ac: AbortController) {
  return fakeLab({
    respond: (c) => {
      if (c.host === host && c.argv.join(' ') === argv) ac.abort();
      return ok();
    },
  });
}

describe('unfinished hosts', () => {
  it('interrupted after 3 of 13 tasks: not done', async () => {
    const ac = new AbortController();
    const r = await runModel(playbook(play(thirteen())), {
      inventory: { hosts: { a: {}, b: {} } },
      lab: interruptAt('a', 'step 3', ac),
      signal: ac.signal,
    });
    expect(r.code).toBe(99);
    expect(r.lab.argvs('a')).toEqual(['step 1', 'step 2', 'step 3']);
    expect(runEnd(r.events).unfinished).toEqual(['a', 'b']);
    expect(states(r.events)).toEqual({ a: 'unfinished', b: 'unfinished' });
  });

  it('interrupted during the last task: the hosts did get to the end', async () => {
    const ac = new AbortController();
    const r = await runModel(playbook(play(thirteen())), {
      inventory: { hosts: { a: {}, b: {} } },
      lab: interruptAt('a', 'step 13', ac),
      signal: ac.signal,
    });
    expect(r.code).toBe(99);
    expect(runEnd(r.events).unfinished).toBeUndefined();
    expect(states(r.events)).toEqual({ a: 'done', b: 'done' });
  });

  it('a later play the interrupt kept from starting leaves its hosts unfinished', async () => {
    const ac = new AbortController();
    const r = await runModel(playbook(play([cmd('one')], { hosts: 'a' }), play([cmd('two')], { hosts: 'all' })), {
      inventory: { hosts: { a: {}, b: {} } },
      lab: interruptAt('a', 'one', ac),
      signal: ac.signal,
    });
    expect(r.code).toBe(99);
    expect(runEnd(r.events).unfinished).toEqual(['a', 'b']);
  });

  it('serial batches not reached are unfinished; the finished batch is done', async () => {
    const ac = new AbortController();
    const r = await runModel(playbook(play([cmd('x'), cmd('y')], { serial: [1] })), {
      inventory: { hosts: { a: {}, b: {}, c: {} } },
      lab: interruptAt('a', 'y', ac),
      signal: ac.signal,
    });
    expect(runEnd(r.events).unfinished).toEqual(['b', 'c']);
    // The hosts of the batches never reached are the run's too: unfinished, not missing.
    expect(states(r.events)).toEqual({ a: 'done', b: 'unfinished', c: 'unfinished' });
  });

  it('free strategy: the host that had finished is done, the other is not', async () => {
    const ac = new AbortController();
    let release: () => void = () => {};
    const slow = new Promise<void>((res) => {
      release = res;
    });
    const lab = fakeLab({
      respond: async (c) => {
        if (c.host === 'b' && c.argv.join(' ') === 'x') await slow;
        if (c.host === 'a' && c.argv.join(' ') === 'z') {
          ac.abort();
          release();
        }
        return ok();
      },
    });
    const r = await runModel(playbook(play([cmd('x'), cmd('y'), cmd('z')], { strategy: 'free' })), {
      inventory: { hosts: { a: {}, b: {} } },
      lab,
      signal: ac.signal,
    });
    expect(r.lab.argvs('a')).toEqual(['x', 'y', 'z']);
    expect(r.lab.argvs('b')).toEqual(['x']);
    expect(runEnd(r.events).unfinished).toEqual(['b']);
    expect(states(r.events)).toEqual({ a: 'done', b: 'unfinished' });
  });

  it('a run that ends normally has no unfinished host', async () => {
    const r = await runModel(playbook(play(thirteen())), { inventory: { hosts: { a: {} } } });
    expect(r.code).toBe(0);
    expect(runEnd(r.events).unfinished).toBeUndefined();
    expect(states(r.events)).toEqual({ a: 'done' });
  });
});

describe('--limit matching nothing', () => {
  it('is an error before anything runs (exit 1 from the CLI)', async () => {
    await expect(runModel(playbook(play([cmd('x')])), { inventory: { hosts: { a: {} } }, options: { limit: 'nosuch' } })).rejects.toMatchObject({
      kind: 'runtime',
      exitCode: 1,
      message: expect.stringMatching(/--limit "nosuch" matches no host/),
    });
  });

  it('a play pattern matching nothing is skipped, as in ansible-playbook', async () => {
    const r = await runModel(playbook(play([cmd('x')], { hosts: 'nosuch' }), play([cmd('y')])), { inventory: { hosts: { a: {} } } });
    expect(r.code).toBe(0);
    expect(r.lab.argvs('a')).toEqual(['y']);
  });
});
