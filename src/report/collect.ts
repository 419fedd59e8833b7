// One run journal -> what the report needs from it: the run, its tasks, and per host the task
// entries with start, duration, outcome, message, result and retries. A journal cut short by a
// crash still gives everything up to its last line; tasks that never ended are `unfinished`.
import type { HostStats } from '../output/events.js';
import { type Counts, countsFor } from '../output/recap-counts.js';
import type { JournalContents } from '../journal/reader.js';
import type { EntryStatus, ReportRun, ReportTask } from './model.js';

/** Caps on a result kept for the node view; the journal keeps the whole of it. */
const RESULT_CAPS = { stringChars: 4000, arrayItems: 200, depth: 12 };

export interface CollectedEntry {
  taskId: string;
  /** Epoch ms. */
  start: number;
  durationMs: number;
  status: EntryStatus;
  msg: string | undefined;
  result: Record<string, unknown> | undefined;
  retries: number;
  retryMsg: string | undefined;
  items: number;
  /** What the result added to the host's recap counters (recap-counts.ts); none when unfinished. */
  counts: Counts;
}

interface CollectedHost {
  entries: CollectedEntry[];
  warnings: string[];
  /** From the run's recap, when it got that far. */
  recap: HostStats | undefined;
}

export interface CollectedRun {
  run: Omit<ReportRun, 'offsetMs'>;
  tasks: Map<string, ReportTask>;
  hosts: Map<string, CollectedHost>;
  warnings: string[];
}

const ROLE = /(?:^|\/)roles\/([^/]+)\/(?:tasks|handlers)\//;

/** The phase a task belongs to: its role, else its play. */
function phaseOf(taskId: string, play: string): string {
  return ROLE.exec(taskId)?.[1] ?? play;
}

function capped(v: unknown, depth: number): unknown {
  if (typeof v === 'string')
    return v.length > RESULT_CAPS.stringChars ? `${v.slice(0, RESULT_CAPS.stringChars)}… [${v.length} characters; the rest is in the run journal]` : v;
  if (v === null || typeof v !== 'object') return v;
  if (depth >= RESULT_CAPS.depth) return '… [nested deeper than the report shows; see the run journal]';
  if (Array.isArray(v)) {
    const items = v.slice(0, RESULT_CAPS.arrayItems).map((x) => capped(x, depth + 1));
    if (v.length > RESULT_CAPS.arrayItems) items.push(`… [${v.length - RESULT_CAPS.arrayItems} more items in the run journal]`);
    return items;
  }
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = capped(x, depth + 1);
  return out;
}

/** A module result as the node view shows it: without the keys shown beside it, capped. */
function resultValue(result: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!result) return undefined;
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(result)) if (k !== 'changed' && k !== 'failed' && k !== 'msg') rest[k] = capped(v, 1);
  return Object.keys(rest).length ? rest : undefined;
}

const OPTION_KEYS: Array<[string, string]> = [
  ['limit', 'limit'],
  ['tags', 'tags'],
  ['skipTags', 'skip tags'],
  ['check', 'check'],
  ['forks', 'forks'],
  ['shard', 'shard'],
  ['startAtTask', 'start at task'],
];

function shownOptions(options: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!options) return out;
  for (const [key, label] of OPTION_KEYS) {
    const v = options[key];
    if (v === undefined || v === null || v === false || (Array.isArray(v) && v.length === 0)) continue;
    out[label] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  const extra = options.extraVars;
  if (extra && typeof extra === 'object' && Object.keys(extra).length > 0) out['extra vars'] = Object.keys(extra).join(', ');
  return out;
}

export function collectRun(journal: JournalContents): CollectedRun {
  const h = journal.header;
  const records = journal.records;
  const first = records[0];
  let started = h?.time ?? first?.time ?? 0;
  let end = started;
  let exitCode: number | undefined;
  let finished = false;
  let options = h?.options;
  const tasks = new Map<string, ReportTask>();
  const hosts = new Map<string, CollectedHost>();
  const warnings: string[] = [];
  const open = new Map<string, { start: number; retries: number; retryMsg: string | undefined; items: number; itemMsg: string | undefined }>();

  const host = (name: string): CollectedHost => {
    let c = hosts.get(name);
    if (!c) {
      c = { entries: [], warnings: [], recap: undefined };
      hosts.set(name, c);
    }
    return c;
  };
  const task = (taskId: string, name: string, play = '', module = '', rescue = false): void => {
    if (!tasks.has(taskId)) tasks.set(taskId, { name, phase: phaseOf(taskId, play), module, ...(rescue ? { rescue } : {}) });
  };
  const openOf = (hostName: string, taskId: string, time: number) => {
    const key = `${hostName}\0${taskId}`;
    let o = open.get(key);
    if (!o) {
      o = { start: time, retries: 0, retryMsg: undefined, items: 0, itemMsg: undefined };
      open.set(key, o);
    }
    return o;
  };

  for (const r of records) {
    if (typeof r.time === 'number' && r.time > end) end = r.time;
    switch (r.type) {
      case 'run_start':
        if (!h) started = r.time;
        options ??= r.options;
        break;
      case 'play_start':
        for (const name of r.hosts) host(name);
        break;
      case 'task_start':
        task(r.taskId, r.task, r.play, r.module, r.rescue === true);
        break;
      case 'host_task_start': {
        task(r.taskId, r.task);
        host(r.host);
        const key = `${r.host}\0${r.taskId}`;
        open.set(key, { start: r.time, retries: 0, retryMsg: undefined, items: 0, itemMsg: undefined });
        break;
      }
      case 'retry': {
        const o = openOf(r.host, r.taskId, r.time);
        o.retries++;
        o.retryMsg = r.msg;
        break;
      }
      case 'host_result': {
        task(r.taskId, r.task);
        const o = openOf(r.host, r.taskId, r.time - r.durationMs);
        if (r.item !== undefined) {
          o.items++;
          if ((r.status === 'failed' || r.status === 'unreachable') && o.itemMsg === undefined) o.itemMsg = r.msg;
          break;
        }
        open.delete(`${r.host}\0${r.taskId}`);
        const msg = o.itemMsg && r.msg !== o.itemMsg ? `${r.msg ?? ''} (first failed item: ${o.itemMsg})`.trim() : r.msg;
        host(r.host).entries.push({
          taskId: r.taskId,
          start: Math.min(o.start, r.time - r.durationMs),
          durationMs: r.durationMs,
          status: r.status,
          msg,
          result: resultValue(r.result),
          retries: o.retries,
          retryMsg: o.retryMsg,
          items: o.items,
          // journals from before results carried their counts: the same rule from the status
          counts: r.counts ?? countsFor(r.status, r.changed),
        });
        break;
      }
      case 'warning':
        if (r.host) host(r.host).warnings.push(r.task ? `${r.task}: ${r.message}` : r.message);
        else warnings.push(r.message);
        break;
      case 'recap':
        for (const [name, stats] of Object.entries(r.stats)) host(name).recap = stats;
        break;
      case 'run_end':
        exitCode = r.exitCode;
        finished = true;
        break;
      default:
        break;
    }
  }
  // Tasks that started and never ended: the run was killed or crashed while they ran.
  for (const [key, o] of open) {
    const [hostName, taskId] = key.split('\0') as [string, string];
    host(hostName).entries.push({
      taskId,
      start: o.start,
      durationMs: Math.max(0, end - o.start),
      status: 'unfinished',
      msg: finished ? 'no result recorded' : 'no result: the run ended (killed or crashed) while this task ran',
      result: undefined,
      retries: o.retries,
      retryMsg: o.retryMsg,
      items: o.items,
      counts: {},
    });
  }
  for (const c of hosts.values()) c.entries.sort((a, b) => a.start - b.start);

  return {
    run: {
      id: h?.runId ?? journal.file.replace(/^.*\//, '').replace(/\.jsonl$/, ''),
      playbook: h?.playbook ?? '',
      inventories: h?.inventories ?? [],
      version: h?.version ?? '',
      started,
      durationMs: Math.max(0, end - started),
      exitCode,
      finished,
      resumedFrom: h?.resumedFrom,
      badLines: journal.badLines,
      options: shownOptions(options),
    },
    tasks,
    hosts,
    warnings,
  };
}
