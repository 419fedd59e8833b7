// JUnit, the journal's progress table (`tsbm runs show`) and the HTML report read results as
// the recap counts them: loop items through their task's result, rescued and ignored failures as
// no failure, results the recap leaves out (meta) not at all.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { JournalHeader, JournalRecord } from '../../src/journal/records.js';
import { hostProgress } from '../../src/journal/reader.js';
import { buildReport } from '../../src/report/build.js';
import { type EventOf, EventBus, type HostStatus, type TsbmEvent } from '../../src/output/events.js';
import { attachJUnit } from '../../src/output/junit.js';
import { countsFor } from '../../src/output/recap-counts.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-recapuse-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let t = 0;
function result(host: string, taskId: string, status: HostStatus, extra: Partial<EventOf<'host_result'>> = {}): EventOf<'host_result'> {
  const changed = extra.changed ?? false;
  return {
    type: 'host_result',
    time: ++t,
    host,
    task: `task ${taskId}`,
    taskId,
    status,
    changed,
    durationMs: 1,
    ...(extra.item === undefined ? { counts: countsFor(status, changed) } : {}),
    ...extra,
  };
}

/** An ignored loop with a failed item, a rescued failure, an uncounted meta, then a real failure. */
function run(): TsbmEvent[] {
  return [
    { type: 'play_start', time: 0, play: 'p', hosts: ['h'] },
    result('h', 'loop', 'ok', { item: 1, changed: true }),
    result('h', 'loop', 'failed', { item: 2, changed: true }),
    result('h', 'loop', 'ignored', { changed: true }),
    result('h', 'block', 'rescued'),
    result('h', 'meta', 'skipped', { counts: {} }),
    result('h', 'last', 'failed'),
  ];
}

describe('consumers of the recap counts', () => {
  it('JUnit per task: a testcase takes its task result; rescued and ignored are no failure; meta is no testcase', async () => {
    const bus = new EventBus();
    const file = join(dir, 'j.xml');
    const j = attachJUnit(bus, file, 'task');
    for (const e of run()) bus.emit(e);
    await j.done();
    const xml = readFileSync(file, 'utf8');
    expect(xml).toMatch(/<testsuites [^>]*tests="3" failures="1" errors="0" skipped="0"/);
    expect(xml).toContain('h: task loop');
    expect(xml).not.toContain('task meta');
    expect(xml).toMatch(/name="h: task last"[^>]*>\s*<failure/);
  });

  it('JUnit per host: the steps are the task results as counted; only the unrescued failure fails the host', async () => {
    const bus = new EventBus();
    const file = join(dir, 'h.xml');
    const j = attachJUnit(bus, file);
    for (const e of run()) bus.emit(e);
    await j.done();
    const xml = readFileSync(file, 'utf8');
    expect(xml).toMatch(/<testsuites [^>]*tests="1" failures="1" errors="0" skipped="0"/);
    expect(xml).toMatch(/<testcase name="h" [^>]*>\s*<failure message="task last: failed" type="failed">/);
    const out = /<system-out>([^<]*)<\/system-out>/.exec(xml)?.[1]?.split('\n');
    expect(out).toEqual(['ignored: task loop (0.0s)', 'rescued: task block (0.0s)', 'failed: task last (0.0s)']);
  });

  it('the journal progress table sums the counts on results, skipping loop items', () => {
    const [p] = hostProgress(run());
    expect(p!.stats).toEqual({ ok: 1, changed: 1, unreachable: 0, failed: 1, skipped: 0, rescued: 1, ignored: 1 });
  });

  it('the journal progress table counts results of older journals (no counts) by the same rule', () => {
    const old = run().map((e) => (e.type === 'host_result' ? { ...e, counts: undefined } : e)) as TsbmEvent[];
    const [p] = hostProgress(old.filter((e) => e.type !== 'host_result' || e.taskId !== 'meta'));
    expect(p!.stats).toEqual({ ok: 1, changed: 1, unreachable: 0, failed: 1, skipped: 0, rescued: 1, ignored: 1 });
  });

  it("the report's per-host counters are the recap's", () => {
    const records = [
      { type: 'journal_start', time: 0, runId: 'r', version: '0', playbook: '/p.yml', playbookHash: 'h', inventories: [], inventoryHash: 'i', options: {} },
      { type: 'run_start', time: 0, runId: 'r', playbook: '/p.yml', version: '0', options: {} },
      ...run(),
    ] as JournalRecord[];
    const model = buildReport([{ file: '/r.jsonl', header: records[0] as JournalHeader, records, badLines: 0 }]);
    expect(model.hosts[0]!.stats).toEqual({ ok: 1, changed: 1, unreachable: 0, failed: 1, skipped: 0, rescued: 1, ignored: 1 });
  });
});
