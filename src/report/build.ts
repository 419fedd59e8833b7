// Journals of one run (or of a run and the runs it resumed, oldest first) -> the report model.
// The runs share one time axis: each starts where the previous ended plus a short gap, so a
// resume hours later does not squeeze the timeline into a sliver.
import type { HostStats } from '../output/events.js';
import { addCounts } from '../output/recap-counts.js';
import type { JournalContents } from '../journal/reader.js';
import { type CollectedEntry, type CollectedRun, collectRun } from './collect.js';
import { emptyStats, type HostState, type ReportEntry, type ReportHost, type ReportModel, type ReportRun, type ReportTask } from './model.js';
import { naturalCompare, summarize } from './summary.js';
import { hostEnds } from '../journal/outcomes.js';
import type { HostEnd } from '../output/host-outcome.js';

const DONE = new Set(['ok', 'changed', 'skipped']);

/** The gap drawn between runs of a resume chain: 3% of the runs' time, whatever the real pause. */
function gapMs(runs: CollectedRun[]): number {
  const total = runs.reduce((s, r) => s + r.run.durationMs, 0);
  return Math.max(1, Math.round(total * 0.03));
}

function stateOf(end: HostEnd | undefined, recap: HostStats | undefined, entries: ReportEntry[], runFinished: boolean): HostState {
  // The run's own outcome when it recorded one (an interrupted host is unfinished, whatever its counters).
  if (end && runFinished) return end.outcome;
  if (recap) return recap.unreachable > 0 ? 'unreachable' : recap.failed > 0 ? 'failed' : 'ok';
  if (entries.some((e) => e.status === 'unfinished')) return 'unfinished';
  const latest = new Map<number, ReportEntry>();
  for (const e of entries) latest.set(e.task, e);
  const last = [...latest.values()];
  if (last.some((e) => e.status === 'unreachable')) return 'unreachable';
  if (last.some((e) => e.status === 'failed')) return 'failed';
  return runFinished ? 'ok' : 'unfinished';
}

export function buildReport(chain: JournalContents[], generated = Date.now()): ReportModel {
  const collected = chain.map(collectRun);
  const ends = chain.map((j) => hostEnds(j.records));
  const gap = gapMs(collected);
  const runs: ReportRun[] = [];
  let offset = 0;
  for (const c of collected) {
    runs.push({ ...c.run, offsetMs: offset });
    offset += c.run.durationMs + gap;
  }
  const axisMs = Math.max(1, offset - gap);

  const tasks: ReportTask[] = [];
  const taskIndex = new Map<string, number>();
  for (const c of collected)
    for (const [id, t] of c.tasks)
      if (!taskIndex.has(id)) {
        taskIndex.set(id, tasks.length);
        tasks.push(t);
      }

  const names = new Set<string>();
  for (const c of collected) for (const n of c.hosts.keys()) names.add(n);

  const hosts: ReportHost[] = [];
  for (const name of [...names].sort(naturalCompare)) {
    const entries: ReportEntry[] = [];
    const done = new Set<string>();
    const warnings: string[] = [];
    let lastRun = -1;
    let totalMs = 0;
    // Counted as the recap counts (recap-counts.ts), over the entries the report keeps.
    const stats = emptyStats();
    collected.forEach((c, runIdx) => {
      const ch = c.hosts.get(name);
      if (!ch) return;
      lastRun = runIdx;
      warnings.push(...ch.warnings);
      const kept: CollectedEntry[] = [];
      for (const e of ch.entries) {
        // A resumed run reports tasks done before as skipped: the earlier entry already says it.
        if (runIdx > 0 && e.status === 'skipped' && done.has(e.taskId)) continue;
        kept.push(e);
      }
      for (const e of ch.entries) {
        if (DONE.has(e.status)) done.add(e.taskId);
        else done.delete(e.taskId);
      }
      if (kept.length) totalMs += Math.max(...kept.map((e) => e.start + e.durationMs)) - Math.min(...kept.map((e) => e.start));
      for (const e of kept) {
        addCounts(stats, e.counts);
        entries.push({
          task: taskIndex.get(e.taskId)!,
          run: runIdx,
          startMs: Math.max(0, runs[runIdx]!.offsetMs + e.start - c.run.started),
          durationMs: e.durationMs,
          status: e.status,
          msg: e.msg,
          result: e.result,
          retries: e.retries,
          retryMsg: e.retryMsg,
          items: e.items,
        });
      }
    });
    const last = collected[lastRun]!;
    const lastEntries = entries.filter((e) => e.run === lastRun);
    const end = ends[lastRun]!.hosts.get(name);
    const state = stateOf(ends[lastRun]!.ended ? end : undefined, last.hosts.get(name)!.recap, lastEntries.length ? lastEntries : entries, last.run.finished);
    const bad = state === 'ok' ? undefined : [...entries].reverse().find((e) => e.status === state || (state === 'unfinished' && e.status === 'interrupted'));
    const failure = bad ? { task: bad.task, msg: bad.msg ?? bad.status } : end?.reason && state !== 'ok' ? { task: -1, msg: end.reason } : undefined;
    hosts.push({
      name,
      state,
      stats,
      entries,
      totalMs,
      retries: entries.reduce((s, e) => s + e.retries, 0),
      warnings,
      failure,
      ...(end?.node ? { node: end.node } : {}),
    });
  }

  return {
    generated,
    runs,
    tasks,
    hosts,
    axisMs,
    warnings: collected.flatMap((c) => c.warnings),
    summary: summarize(runs, tasks, hosts),
  };
}
