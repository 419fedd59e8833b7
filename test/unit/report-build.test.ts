// The HTML run report from journals: the model (states, crashed and resumed runs, summary),
// the page's size at 1000 nodes, and that nothing in a journal can turn into markup or a fetch.
import { appendFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JournalRecord } from '../../src/journal/records.js';
import { readJournal } from '../../src/journal/reader.js';
import { buildReport } from '../../src/report/build.js';
import type { encodeReport } from '../../src/report/encode.js';
import { renderReportHtml } from '../../src/report/html.js';
import { failurePattern } from '../../src/report/summary.js';
import { writeRunReport } from '../../src/report/write.js';
import { fleetJournal, writeJournal } from '../helpers/fleet-journal.js';
import { journalHeader } from '../helpers/journal-header.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();

/** The data block of a report page, parsed back. */
function payloadOf(html: string): ReturnType<typeof encodeReport> {
  const m = /<script type="application\/json" id="tsbm-report-data">([^<]*)<\/script>/.exec(html);
  expect(m).not.toBeNull();
  return JSON.parse(m![1]!);
}

const T = 1_800_000_000_000;
const task = (taskId: string, name: string, time: number): JournalRecord => ({ type: 'task_start', time, play: 'P', task: name, taskId, module: 'command' });
const start = (host: string, taskId: string, name: string, time: number): JournalRecord => ({ type: 'host_task_start', time, host, task: name, taskId });
const result = (host: string, taskId: string, name: string, time: number, status: 'ok' | 'changed' | 'failed' | 'skipped', durationMs: number, msg?: string): JournalRecord => ({
  type: 'host_result', time, host, task: name, taskId, status, changed: status === 'changed', durationMs, ...(msg ? { msg } : {}),
});

describe('report model', () => {
  it('1000 nodes: under 3 MB, every node, failures grouped, retries counted', () => {
    const dir = scratch('tsbm-report-');
    const journal = join(dir, 'run.jsonl');
    const records = fleetJournal({ nodes: 1000, failEvery: 50, unreachableEvery: 97, retryEvery: 10 });
    writeJournal(journal, records);
    const out = join(dir, 'report.html');
    const r = writeRunReport(journal, out);
    expect(r.hosts).toBe(1000);
    const size = statSync(out).size;
    expect(size).toBeLessThan(3 * 1024 * 1024);
    expect(size).toBeLessThan(statSync(journal).size / 4);
    const p = payloadOf(readFileSync(out, 'utf8'));
    expect(p.hosts).toHaveLength(1000);
    const s = p.summary;
    expect(s.hosts).toEqual({ ok: 970, failed: 20, unreachable: 10, unfinished: 0 });
    // alike failures are one group each, whatever their node names, addresses and digests
    expect(s.failures.map((f) => [p.strings[p.tasks[f.task]![0]], f.hosts.length])).toEqual([
      ['Pull the image', 20],
      ['Wait for the ramdisk and check it is this node', 10],
    ]);
    expect(s.retries).toBe(records.filter((x) => x.type === 'retry').length);
    expect(s.retries).toBeGreaterThan(1000);
    expect(s.retriedHosts[0]).toMatchObject({ retries: 12 });
    expect(s.phases.map((x) => x.phase)).toEqual(['power-off', 'boot-ramdisk', 'wait-agent', 'discover', 'deploy', 'configure', 'finish']);
    expect(s.phases.find((x) => x.phase === 'deploy')).toMatchObject({ nodes: 990 });
    expect(s.slowestHosts).toHaveLength(10);
  });

  it('a run killed mid-way: tasks without a result are unfinished, a torn last line is counted, not fatal', () => {
    const dir = scratch('tsbm-report-');
    const file = join(dir, 'cut.jsonl');
    writeJournal(file, fleetJournal({ nodes: 5, cutAfterStarts: 23 }));
    appendFileSync(file, '{"type":"host_res'); // the write the kill interrupted
    const model = buildReport([readJournal(file)]);
    const run = model.runs[0]!;
    expect(run.finished).toBe(false);
    expect(run.exitCode).toBeUndefined();
    expect(run.badLines).toBe(1);
    // 23 results over 5 nodes: tasks 1-4 done everywhere, the 5th done on 3 nodes and running on 2
    expect(model.hosts.map((h) => h.state)).toEqual(['unfinished', 'unfinished', 'unfinished', 'unfinished', 'unfinished']);
    const unfinished = model.hosts.flatMap((h) => h.entries.filter((e) => e.status === 'unfinished'));
    expect(unfinished).toHaveLength(2);
    expect(unfinished[0]!.msg).toMatch(/killed or crashed/);
    expect(model.hosts[0]!.entries.map((e) => e.status)).toEqual(['ok', 'changed', 'changed', 'ok', 'ok']);
    expect(model.summary.failures).toEqual([expect.objectContaining({ hosts: ['node0004', 'node0005'] })]);
  });

  it('a resumed run is shown with the run it continued, on one axis, without the tasks it skipped as done', () => {
    const dir = scratch('tsbm-report-');
    const a = [
      journalHeader('20260101-000000-aaaa', { time: T }),
      task('t1', 'One', T + 1),
      start('n1', 't1', 'One', T + 2),
      start('n2', 't1', 'One', T + 2),
      result('n1', 't1', 'One', T + 1002, 'changed', 1000),
      result('n2', 't1', 'One', T + 502, 'failed', 500, 'boom on 10.0.0.2'),
      task('t2', 'Two', T + 1003),
      start('n1', 't2', 'Two', T + 1004),
    ];
    const t2 = T + 3_600_000; // resumed an hour later
    const b = [
      journalHeader('20260101-010000-bbbb', { time: t2, resumedFrom: '20260101-000000-aaaa' }),
      task('t1', 'One', t2 + 1),
      start('n1', 't1', 'One', t2 + 2),
      start('n2', 't1', 'One', t2 + 2),
      result('n1', 't1', 'One', t2 + 3, 'skipped', 0, 'done in the resumed run'),
      result('n2', 't1', 'One', t2 + 1003, 'ok', 1000),
      task('t2', 'Two', t2 + 1004),
      start('n1', 't2', 'Two', t2 + 1005),
      start('n2', 't2', 'Two', t2 + 1005),
      result('n1', 't2', 'Two', t2 + 2005, 'ok', 1000),
      result('n2', 't2', 'Two', t2 + 2005, 'ok', 1000),
      { type: 'recap', time: t2 + 2006, durationMs: 2006, stats: { n1: { ok: 1, changed: 0, unreachable: 0, failed: 0, skipped: 1, rescued: 0, ignored: 0 }, n2: { ok: 2, changed: 0, unreachable: 0, failed: 0, skipped: 0, rescued: 0, ignored: 0 } } },
      { type: 'run_end', time: t2 + 2007, exitCode: 0, durationMs: 2007 },
    ] as JournalRecord[];
    writeJournal(join(dir, '20260101-000000-aaaa.jsonl'), a);
    writeJournal(join(dir, '20260101-010000-bbbb.jsonl'), b);
    const { model, html } = (() => {
      const out = join(dir, 'r.html');
      writeRunReport(join(dir, '20260101-010000-bbbb.jsonl'), out);
      return { model: buildReport([readJournal(join(dir, '20260101-000000-aaaa.jsonl')), readJournal(join(dir, '20260101-010000-bbbb.jsonl'))]), html: readFileSync(out, 'utf8') };
    })();
    expect(model.runs.map((r) => [r.id, r.finished])).toEqual([
      ['20260101-000000-aaaa', false],
      ['20260101-010000-bbbb', true],
    ]);
    // the hour between the runs is a short gap, not an hour of axis
    expect(model.axisMs).toBeLessThan(10_000);
    expect(model.runs[1]!.offsetMs).toBeGreaterThan(model.runs[0]!.durationMs);
    const n1 = model.hosts.find((h) => h.name === 'n1')!;
    expect(n1.state).toBe('ok');
    expect(n1.entries.map((e) => [model.tasks[e.task]!.name, e.run, e.status])).toEqual([
      ['One', 0, 'changed'],
      ['Two', 0, 'unfinished'],
      ['Two', 1, 'ok'],
    ]);
    const n2 = model.hosts.find((h) => h.name === 'n2')!;
    expect(n2.entries.map((e) => [e.run, e.status])).toEqual([
      [0, 'failed'],
      [1, 'ok'],
      [1, 'ok'],
    ]);
    expect(n2.state).toBe('ok');
    expect(n2.entries[1]!.startMs).toBeGreaterThanOrEqual(model.runs[1]!.offsetMs);
    expect(payloadOf(html).runs.map((r) => r.id)).toEqual(['20260101-000000-aaaa', '20260101-010000-bbbb']);
  });

  it('failures group whatever the node names: a message naming its own node (compute-a, compute-b) is one group', () => {
    const msg = (h: string) => `task 'Pull' failed on ${h}: ${h}: podman pull failed (rc 125): unauthorized`;
    const records: JournalRecord[] = [journalHeader('20260101-000000-cccc', { time: T }), task('t1', 'Pull', T + 1)];
    for (const h of ['compute-a', 'compute-b', 'db']) {
      records.push(start(h, 't1', 'Pull', T + 2), result(h, 't1', 'Pull', T + 10, 'failed', 8, msg(h)));
    }
    const dir = scratch('tsbm-report-');
    const file = join(dir, 'names.jsonl');
    writeJournal(file, records);
    const model = buildReport([readJournal(file)]);
    expect(model.summary.failures.map((f) => f.hosts)).toEqual([['compute-a', 'compute-b', 'db']]);
  });

  it('a rescued failure is grouped by the step that failed and its cause, not by the rescue that fails the node', () => {
    const rescueTask = (taskId: string, name: string, time: number): JournalRecord => ({ ...task(taskId, name, time), rescue: true }) as JournalRecord;
    const rescued = (host: string, time: number, msg: string): JournalRecord =>
      ({ type: 'host_result', time, host, task: 'Pull the image', taskId: 'pull', status: 'rescued', changed: false, durationMs: 5, msg }) as JournalRecord;
    const pullMsg = (h: string) => `${h}: podman pull failed (rc 125): reading blob sha256:5f1e: unexpected EOF (auth dir /run/tsbm/${h})`;
    const report = (cause: string) => `node powered off after "Pull the image" failed: ${cause}`;
    const records: JournalRecord[] = [journalHeader('20260101-000000-dddd', { time: T }), task('pull', 'Pull the image', T + 1)];
    for (const h of ['node01', 'node02', 'node03', 'node04', 'node05', 'node06']) records.push(start(h, 'pull', 'Pull the image', T + 2));
    records.push(rescued('node02', T + 10, pullMsg('node02')), rescued('node05', T + 11, pullMsg('node05')), rescued('node06', T + 12, 'pull failed: disk full'));
    for (const h of ['node01', 'node03', 'node04']) records.push(result(h, 'pull', 'Pull the image', T + 12, 'changed', 10));
    records.push(rescueTask('off', 'Power off after the failure', T + 13));
    for (const h of ['node02', 'node05', 'node06']) records.push(start(h, 'off', 'Power off after the failure', T + 13), result(h, 'off', 'Power off after the failure', T + 14, 'changed', 1));
    records.push(rescueTask('report', 'Report the failure', T + 15));
    for (const h of ['node02', 'node05']) records.push(start(h, 'report', 'Report the failure', T + 15), result(h, 'report', 'Report the failure', T + 16, 'failed', 1, report(pullMsg(h))));
    // node06's rescue recovered it (no failing report): it went on, and failed later elsewhere
    records.push(task('install', 'Install', T + 17));
    for (const h of ['node01', 'node03', 'node04', 'node06']) records.push(start(h, 'install', 'Install', T + 17));
    for (const h of ['node01', 'node03']) records.push(result(h, 'install', 'Install', T + 20, 'changed', 3));
    records.push(result('node04', 'install', 'Install', T + 20, 'failed', 3, 'bootc install failed: node04 has no EFI'));
    records.push(result('node06', 'install', 'Install', T + 20, 'failed', 3, 'bootc install failed: node06 has no EFI'));
    const dir = scratch('tsbm-report-');
    const file = join(dir, 'rescued.jsonl');
    writeJournal(file, records);
    const model = buildReport([readJournal(file)]);
    const groups = model.summary.failures.map((g) => ({ ...g, step: model.tasks[g.task]!.name, ended: g.ended && { ...g.ended, task: model.tasks[g.ended.task]!.name } }));
    expect(groups).toEqual([
      {
        task: expect.any(Number),
        step: 'Pull the image',
        // node names stripped: the two nodes' messages (each naming its own node) are one cause
        pattern: '<host>: podman pull failed (rc <n>): reading blob sha<n>:<hex>: unexpected EOF (auth dir /run/tsbm/<host>)',
        example: pullMsg('node02'),
        exampleHost: 'node02',
        ended: { task: 'Report the failure', msg: report(pullMsg('node02')) },
        hosts: ['node02', 'node05'],
      },
      {
        task: expect.any(Number),
        step: 'Install',
        pattern: 'bootc install failed: <host> has no EFI',
        example: 'bootc install failed: node04 has no EFI',
        exampleHost: 'node04',
        ended: undefined,
        hosts: ['node04', 'node06'],
      },
    ]);
  });

  it('failure patterns: addresses, ids, digests and counts do not split a group', () => {
    expect(failurePattern('timed out after 301 s on 10.0.0.7:22 (node0007)')).toBe(failurePattern('timed out after 302 s on 10.0.0.9:22 (node0123)'));
    expect(failurePattern('UUID 8f0c1e2a-1b2c-4d3e-8f40-123456789abc is not 52:54:00:00:01:10')).toBe('UUID <uuid> is not <mac>');
    expect(failurePattern('reading blob sha256:5797: EOF')).toBe(failurePattern('reading blob sha256:2d3f: EOF'));
    expect(failurePattern('pull failed')).not.toBe(failurePattern('install failed'));
  });
});

describe('report page', () => {
  const hostile = '</script><script>alert(1)</script><!-- <img src=x onerror=alert(2)> \u2028 & "q"';
  const records: JournalRecord[] = [
    journalHeader('20260101-000000-cccc', { time: T }),
    task('t1', hostile, T + 1),
    start(hostile, 't1', hostile, T + 2),
    result(hostile, 't1', hostile, T + 10, 'failed', 8, hostile),
    { type: 'run_end', time: T + 11, exitCode: 2, durationMs: 11 },
  ];

  it('journal text cannot end the data block or add markup: it round-trips as data', () => {
    const html = renderReportHtml(buildReport([{ file: 'x.jsonl', header: records[0] as never, records, badLines: 0 }]));
    // exactly the page's own two scripts and no other element from the data
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<!-- <');
    const p = payloadOf(html);
    expect(p.strings).toContain(hostile);
    expect(p.hosts[0]!.n).toBe(p.strings.indexOf(hostile));
  });

  it('is self-contained: no external reference, and a policy that forbids every fetch', () => {
    const html = renderReportHtml(buildReport([{ file: 'x.jsonl', header: records[0] as never, records, badLines: 0 }]));
    expect(html).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src 'none';/);
    // no element loads anything: no src/href attributes, no CSS url(), no @import
    expect(html).not.toMatch(/\s(src|href)=["']?(https?:|\/\/|[a-z]+\.)/i);
    expect(html).not.toMatch(/url\(|@import/);
    expect(html).not.toMatch(/<link\b/);
  });
});
