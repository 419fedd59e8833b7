// The first Ctrl-C (or SIGTERM) ends a wait at once, whatever its poll interval, and the host it
// stopped is reported as it is: unfinished, with the task interrupted, in every output (the
// recap, JUnit as an error, the HTML report, JSON, `tsbm runs show`), never rescued or passed.
// A step that changes a node is not cut: it finishes in the grace period.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hostProgress } from '../../src/journal/reader.js';
import type { JournalContents } from '../../src/journal/reader.js';
import type { JournalRecord } from '../../src/journal/records.js';
import { defineModule } from '../../src/module-api/types.js';
import { EventBus, type TsbmEvent } from '../../src/output/events.js';
import { attachJUnit } from '../../src/output/junit.js';
import { recapLines } from '../../src/output/recap.js';
import { buildReport } from '../../src/report/build.js';
import { Type } from '../../src/schema/type-builder.js';
import { waitUntil } from '../../src/util/wait.js';
import { block, cmd, play, playbook, runModel, task } from '../helpers/executor-model.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-interrupt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HOUR = 3_600_000;

/** A ramdisk wait that never succeeds, polling every ten minutes (as a long agent wait ends up doing). */
function waitModule(onFirstPoll: () => void) {
  return defineModule({
    name: 'slow_wait',
    summary: 'waits for something that never comes',
    runsOn: 'controller',
    args: Type.Object({}),
    checkMode: false,
    changesNode: false,
    example: '',
    async run(ctx) {
      await waitUntil(async () => undefined, {
        timeoutMs: HOUR,
        intervalMs: 600_000,
        signal: ctx.signal,
        what: 'the ramdisk',
        onProgress: onFirstPoll,
      });
      return { changed: false };
    },
  });
}

const recapOf = (events: TsbmEvent[]) => events.find((e) => e.type === 'recap') as Extract<TsbmEvent, { type: 'recap' }>;

describe('the first Ctrl-C during a wait', () => {
  it('ends the wait at once (the grace period is an hour here) and leaves the host unfinished in every output', async () => {
    const ac = new AbortController();
    const bus = new EventBus();
    const junit = join(dir, 'interrupted.xml');
    const written = attachJUnit(bus, junit);
    const deploy = block(
      { block: [cmd('power on'), task('slow_wait', {}, { name: 'Wait for the ramdisk' }), cmd('install')], rescue: [cmd('cleanup after the failure')] },
      { name: 'Deploy' },
    );
    const r = await runModel(playbook(play([deploy])), {
      inventory: { hosts: { node03: {} } },
      modules: [waitModule(() => ac.abort())],
      signal: ac.signal,
      tuning: { interruptGraceMs: HOUR },
      bus,
    });
    await written.done();

    expect(r.code).toBe(99);
    expect(r.resultOf('node03', 'Wait for the ramdisk')?.status).toBe('interrupted');
    // not rescued: the rescue did not run, and nothing after the wait started
    expect(r.lab.argvs('node03')).toEqual(['power on']);
    const recap = recapOf(r.events);
    expect(recap.stats.node03).toMatchObject({ rescued: 0, failed: 0 });
    expect(recap.hosts?.node03).toEqual({ outcome: 'unfinished', reason: 'interrupted during "Wait for the ramdisk"' });
    expect(recapLines(recap.stats, 0, undefined, recap.hosts).join('\n')).toContain('node03: unfinished: interrupted during "Wait for the ramdisk"');

    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(/<testcase name="node03"[^>]*>\s*<error message="Wait for the ramdisk: interrupted[^"]*" type="interrupted">/);
    expect(xml).toMatch(/<testsuites[^>]* errors="1"/);

    const records = r.events as JournalRecord[];
    expect(hostProgress(records).map((h) => [h.host, h.state])).toEqual([['node03', 'unfinished']]);
    const journal: JournalContents = { file: join(dir, 'x.jsonl'), header: undefined, records, badLines: 0 };
    const report = buildReport([journal]);
    expect(report.hosts.map((h) => [h.name, h.state])).toEqual([['node03', 'unfinished']]);
    expect(report.summary.hosts.unfinished).toBe(1);
  });

  it('does not cut a step that changes the node: it finishes, and the host stops after it', async () => {
    const ac = new AbortController();
    let finish: () => void = () => {};
    const long = new Promise<void>((res) => {
      finish = res;
    });
    const r = await runModel(playbook(play([cmd('write the disk'), cmd('next')])), {
      inventory: { hosts: { node01: {} } },
      lab: (await import('../helpers/fake-connection.js')).fakeLab({
        respond: async (c) => {
          if (c.argv.join(' ') === 'write the disk') {
            ac.abort();
            setTimeout(finish, 20);
            await long;
          }
          return { rc: 0, stdout: '', stderr: '' };
        },
      }),
      signal: ac.signal,
      tuning: { interruptGraceMs: HOUR },
    });
    expect(r.code).toBe(99);
    expect(r.resultOf('node01', 'write the disk')?.status).toBe('changed');
    expect(r.lab.argvs('node01')).toEqual(['write the disk']);
    expect(recapOf(r.events).hosts?.node01).toEqual({ outcome: 'unfinished', reason: 'interrupted before "next"' });
  });
});

describe('waitUntil', () => {
  it('an abort ends a wait during its probe, not when the probe returns', async () => {
    const ac = new AbortController();
    let started: () => void = () => {};
    const probing = new Promise<void>((res) => {
      started = res;
    });
    const wait = waitUntil(
      () => {
        started();
        return new Promise<undefined>(() => {}); // a connect attempt that hangs
      },
      { timeoutMs: HOUR, intervalMs: 1000, signal: ac.signal, what: 'a ramdisk' },
    );
    await probing;
    ac.abort(new Error('interrupted'));
    await expect(wait).rejects.toThrow('interrupted');
  });
});
