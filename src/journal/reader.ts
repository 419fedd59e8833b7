// Reads a journal back. A crash can leave the last line torn: it is ignored, never fatal.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { TsbmError } from '../errors.js';
import type { HostStats } from '../output/events.js';
import type { NodeEnd } from '../output/host-outcome.js';
import { hostEnds } from './outcomes.js';
import { addCounts, countsFor } from '../output/recap-counts.js';
import type { JournalHeader, JournalRecord } from './records.js';
import { isRunId } from './run-id.js';
import { modeLabel, scopeOf } from './scope.js';

export interface JournalContents {
  file: string;
  header: JournalHeader | undefined;
  records: JournalRecord[];
  /** Lines that could not be parsed (a torn last line after a crash is the usual one). */
  badLines: number;
}

export function readJournal(file: string): JournalContents {
  const text = readFileSync(file, 'utf8');
  const records: JournalRecord[] = [];
  let badLines = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      records.push(JSON.parse(line) as JournalRecord);
    } catch {
      badLines++;
    }
  }
  const first = records[0];
  const header = first && first.type === 'journal_start' ? first : undefined;
  return { file, header, records, badLines };
}

export interface RunSummary {
  runId: string;
  file: string;
  started: number | undefined;
  playbook: string | undefined;
  finished: boolean;
  exitCode: number | undefined;
  hosts: number;
  resumedFrom: string | undefined;
  /** The run's --limit (undefined: every host the plays target). */
  limit: string | undefined;
  /** "normal", "check", "diff" or "check+diff". */
  mode: string | undefined;
}

export function listRuns(dir: string): RunSummary[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const runs: RunSummary[] = [];
  for (const name of names.filter((n) => n.endsWith('.jsonl')).sort()) {
    const runId = name.slice(0, -'.jsonl'.length);
    if (!isRunId(runId)) continue;
    const j = readJournal(join(dir, name));
    const end = j.records.find((r) => r.type === 'run_end');
    const hosts = new Set<string>();
    for (const r of j.records) if (r.type === 'host_result') hosts.add(r.host);
    const scope = j.header ? scopeOf(j.header) : undefined;
    runs.push({
      runId,
      file: j.file,
      started: j.header?.time ?? statSync(j.file).mtimeMs,
      playbook: j.header?.playbook,
      finished: end !== undefined,
      exitCode: end?.type === 'run_end' ? end.exitCode : undefined,
      hosts: hosts.size,
      resumedFrom: j.header?.resumedFrom,
      limit: scope?.limit,
      mode: scope ? modeLabel(scope) : undefined,
    });
  }
  // Run ids sort by their start second; runs that started within the same second (a fast run
  // and its --resume) are ordered by their start time in ms, not by the random suffix.
  return runs.sort(
    (a, b) =>
      a.runId.slice(0, 15).localeCompare(b.runId.slice(0, 15)) ||
      (a.started ?? 0) - (b.started ?? 0) ||
      a.runId.localeCompare(b.runId),
  );
}

/** `last` or a run id (a unique prefix is enough) to a journal file. */
export function resolveRun(dir: string, ref: string): string {
  const runs = listRuns(dir);
  if (runs.length === 0) throw new TsbmError('options', `no runs recorded in ${dir}`, { hint: 'run `tsbm run` first, or pass --journal-dir' });
  if (ref === 'last') {
    // A run killed before its header reached the disk recorded nothing to resume from.
    const usable = runs.filter((r) => r.playbook !== undefined);
    return (usable[usable.length - 1] ?? runs[runs.length - 1]!).file;
  }
  const hits = runs.filter((r) => r.runId.startsWith(ref));
  if (hits.length === 1) return hits[0]!.file;
  const known = runs.slice(-5).map((r) => r.runId).join(', ');
  throw new TsbmError('options', hits.length ? `run id "${ref}" is ambiguous` : `no run "${ref}" in ${dir}`, {
    hint: `recent runs: ${known}`,
  });
}

export interface HostProgress {
  host: string;
  stats: HostStats;
  lastTask: string | undefined;
  failures: { task: string; msg: string }[];
  /**
   * `done`: ran to the end of the playbook; `unfinished`: the run ended (interrupted or
   * stopped) before this host got there; `in progress`: the run has not ended (still running,
   * or killed outright).
   */
  state: 'done' | 'failed' | 'unreachable' | 'unfinished' | 'in progress';
  /** Why it is not done (the failure, or what stopped it), as the run's outcome says. */
  reason?: string;
  /** The node's record as the run left it (runs that keep node records). */
  node?: NodeEnd;
}

/** Per-host progress table for `tsbm runs show`: counters from the results, the state from the run's outcomes. */
export function hostProgress(records: JournalRecord[]): HostProgress[] {
  const byHost = new Map<string, HostProgress>();
  const get = (host: string) => {
    let h = byHost.get(host);
    if (!h) {
      h = {
        host,
        stats: { ok: 0, changed: 0, unreachable: 0, failed: 0, skipped: 0, rescued: 0, ignored: 0 },
        lastTask: undefined,
        failures: [],
        state: 'in progress',
      };
      byHost.set(host, h);
    }
    return h;
  };
  let recap: Record<string, HostStats> | undefined;
  for (const r of records) {
    if (r.type === 'host_task_start') get(r.host).lastTask = r.task;
    else if (r.type === 'host_result') {
      const h = get(r.host);
      h.lastTask = r.task;
      // The counts the recap added for this result (journals from before they were recorded:
      // the same rule from the status; loop items count through their task's result).
      if (r.counts) addCounts(h.stats, r.counts);
      else if (r.item === undefined) addCounts(h.stats, countsFor(r.status, r.changed));
      if (r.status === 'failed' || r.status === 'unreachable') h.failures.push({ task: r.task, msg: r.msg ?? '' });
    } else if (r.type === 'recap') recap = r.stats;
  }
  const ends = hostEnds(records);
  for (const [host, end] of ends.hosts) {
    const h = get(host);
    const final = recap?.[host];
    if (final) h.stats = final;
    if (end.reason && end.outcome !== 'ok') h.reason = end.reason;
    if (end.node) h.node = end.node;
    if (end.outcome === 'failed' || end.outcome === 'unreachable') h.state = end.outcome;
    else if (!ends.ended) h.state = 'in progress';
    else h.state = end.outcome === 'ok' ? 'done' : 'unfinished';
  }
  return [...byHost.values()].sort((a, b) => a.host.localeCompare(b.host));
}
