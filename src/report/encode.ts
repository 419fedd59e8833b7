// The report model as the compact JSON the page reads: every string once in a table, each
// host's entries as one flat array of numbers, and module results as shared trees (a value
// that repeats across nodes, like a disk's model or an image URL, is stored once). A
// 1000-node deploy fits in well under 3 MB, and every value stays readable text in the file.
import { nodeText } from '../output/host-outcome.js';
import type { EntryStatus, HostState, ReportModel } from './model.js';

/** Order of the status codes in the payload; the client has the same list. */
const STATUSES: readonly EntryStatus[] = ['ok', 'changed', 'failed', 'unreachable', 'skipped', 'rescued', 'ignored', 'unfinished', 'interrupted'];
const STATES: readonly HostState[] = ['ok', 'failed', 'unreachable', 'unfinished'];
// A host's `e` array holds 10 numbers per entry (the client's ENTRY_FIELDS): task, run, start,
// duration, status, msg, result (into values), retries, retry msg, items.

export interface Payload {
  v: 1;
  generated: number;
  axisMs: number;
  statuses: readonly EntryStatus[];
  states: readonly HostState[];
  strings: string[];
  /**
   * Result trees: an entry is the JSON text of a string, number, boolean or null; or
   * `{k,v,k,v...}` for an object (k: index into strings, v: index into values); or `[v,v...]`.
   */
  values: string[];
  runs: ReportModel['runs'];
  /** [name, phase, module] as string indexes. */
  tasks: [number, number, number][];
  /**
   * n: name, s: state, t: total ms, r: retries, f: [task (-1: none), msg] of the failure, w: warnings,
   * d: the node's record as the run left it (one line), e: entries.
   */
  hosts: { n: number; s: number; t: number; r: number; f?: [number, number]; w?: number[]; d?: number; e: number[] }[];
  warnings: string[];
  summary: ReportModel['summary'];
}

export function encodeReport(model: ReportModel): Payload {
  const strings: string[] = [];
  const index = new Map<string, number>();
  const str = (s: string | undefined): number => {
    if (s === undefined) return -1;
    let i = index.get(s);
    if (i === undefined) {
      i = strings.length;
      strings.push(s);
      index.set(s, i);
    }
    return i;
  };
  const values: string[] = [];
  const valueIndex = new Map<string, number>();
  const intern = (text: string): number => {
    let i = valueIndex.get(text);
    if (i === undefined) {
      i = values.length;
      values.push(text);
      valueIndex.set(text, i);
    }
    return i;
  };
  const value = (v: unknown): number => {
    if (Array.isArray(v)) return intern(`[${v.map(value).join(',')}]`);
    if (v !== null && typeof v === 'object') {
      const parts: number[] = [];
      for (const [k, x] of Object.entries(v)) if (x !== undefined) parts.push(str(k), value(x));
      return intern(`{${parts.join(',')}}`);
    }
    return intern(JSON.stringify(v ?? null));
  };
  const status = (s: EntryStatus) => STATUSES.indexOf(s);
  return {
    v: 1,
    generated: model.generated,
    axisMs: model.axisMs,
    statuses: STATUSES,
    states: STATES,
    strings,
    values,
    runs: model.runs,
    tasks: model.tasks.map((t) => [str(t.name), str(t.phase), str(t.module)]),
    hosts: model.hosts.map((h) => {
      const e: number[] = [];
      for (const x of h.entries)
        e.push(x.task, x.run, Math.round(x.startMs), Math.round(x.durationMs), status(x.status), str(x.msg), x.result ? value(x.result) : -1, x.retries, str(x.retryMsg), x.items);
      return {
        n: str(h.name),
        s: STATES.indexOf(h.state),
        t: Math.round(h.totalMs),
        r: h.retries,
        ...(h.failure ? { f: [h.failure.task, str(h.failure.msg)] as [number, number] } : {}),
        ...(h.warnings.length ? { w: h.warnings.map(str) } : {}),
        ...(h.node ? { d: str(`${nodeText(h.node)}${h.node.error ? ` (${h.node.error})` : ''}`) } : {}),
        e,
      };
    }),
    warnings: model.warnings,
    summary: model.summary,
  };
}

/**
 * JSON safe inside a <script type="application/json"> element: no `<` (so no `</script>` or
 * `<!--` can end or change the element), no `>`/`&`, and the two line separators escaped.
 */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
