// The summary figures of a report: hosts by state, results by outcome, slowest hosts and
// phases, retries, and failures grouped by the step that failed and its cause.
import type { EntryStatus, FailureGroup, HostState, PhaseSummary, ReportEntry, ReportHost, ReportRun, ReportSummary, ReportTask } from './model.js';

const TOP = 10;

/** node2 before node10. */
export function naturalCompare(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true, sensitivity: 'variant' });
}

/**
 * A failure message with what differs between alike failures (ids, addresses, numbers) replaced,
 * so "timed out after 301 s on 10.0.0.7" and "... 302 s on 10.0.0.9" group together.
 */
export function failurePattern(msg: string): string {
  return msg
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>')
    .replace(/\b(?:[0-9a-f]{2}:){5}[0-9a-f]{2}\b/gi, '<mac>')
    .replace(/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g, '<addr>')
    .replace(/\b(?=[0-9a-f]*\d)[0-9a-f]{4,}\b/gi, '<hex>')
    .replace(/\d+(?:\.\d+)?/g, '<n>')
    .replace(/\s+/g, ' ')
    .trim();
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

/** Each phase's time on each node (the sum of its tasks there), then median, p95 and max over nodes. */
function phases(hosts: ReportHost[], tasks: ReportTask[]): PhaseSummary[] {
  const byPhase = new Map<string, { perHost: Map<string, number>; order: number }>();
  for (const h of hosts) {
    for (const e of h.entries) {
      if (e.status === 'skipped') continue;
      const t = tasks[e.task]!;
      let p = byPhase.get(t.phase);
      if (!p) {
        p = { perHost: new Map(), order: e.task };
        byPhase.set(t.phase, p);
      }
      p.order = Math.min(p.order, e.task);
      p.perHost.set(h.name, (p.perHost.get(h.name) ?? 0) + e.durationMs);
    }
  }
  return [...byPhase.entries()]
    .sort((a, b) => a[1].order - b[1].order)
    .map(([phase, p]) => {
      let slowestHost = '';
      let maxMs = -1;
      for (const [host, ms] of p.perHost) {
        if (ms > maxMs) {
          maxMs = ms;
          slowestHost = host;
        }
      }
      const sorted = [...p.perHost.values()].sort((a, b) => a - b);
      return { phase, nodes: sorted.length, medianMs: quantile(sorted, 0.5), p95Ms: quantile(sorted, 0.95), maxMs: Math.max(0, maxMs), slowestHost };
    });
}

/** The message with every node name in it as `<host>` (messages name their node, and sometimes another). */
function withoutHosts(msg: string, names: ReadonlySet<string>): string {
  return msg.replace(/[\w.-]+/g, (token) => {
    const bare = token.replace(/\.+$/, ''); // a name ending a sentence
    return names.has(bare) ? `<host>${token.slice(bare.length)}` : token;
  });
}

const BAD: ReadonlySet<EntryStatus> = new Set(['failed', 'unreachable', 'unfinished', 'interrupted']);

/**
 * Nodes grouped by the step that failed and its cause. A failure a rescue handled (`rescued`)
 * starts an episode: a failure in the rescue's tasks that follow (the deploy's cleanup ends by
 * failing the node on purpose, repeating the cause) belongs to the rescued step; a task outside
 * the rescue ends the episode (the rescue recovered the node).
 */
function failures(hosts: ReportHost[], tasks: ReportTask[]): FailureGroup[] {
  const names = new Set(hosts.map((h) => h.name));
  const groups = new Map<string, FailureGroup>();
  for (const h of hosts) {
    let rescued: ReportEntry | undefined;
    let run = -1;
    for (const e of h.entries) {
      if (e.run !== run) {
        run = e.run;
        rescued = undefined;
      }
      const cleanup = tasks[e.task]?.rescue === true;
      if (e.status === 'rescued') {
        rescued ??= e;
        continue;
      }
      if (!BAD.has(e.status)) {
        if (!cleanup) rescued = undefined;
        continue;
      }
      const cause = cleanup && rescued ? rescued : e;
      const msg = cause.msg ?? cause.status;
      const pattern = failurePattern(withoutHosts(msg, names));
      const key = `${cause.task}\0${pattern}`;
      let g = groups.get(key);
      if (!g) {
        g = { task: cause.task, pattern, example: msg, exampleHost: h.name, hosts: [] };
        if (cause !== e) g.ended = { task: e.task, msg: e.msg ?? e.status };
        groups.set(key, g);
      }
      if (!g.hosts.includes(h.name)) g.hosts.push(h.name);
      rescued = undefined;
    }
  }
  return [...groups.values()].sort((a, b) => b.hosts.length - a.hosts.length || a.task - b.task);
}

export function summarize(runs: ReportRun[], tasks: ReportTask[], hosts: ReportHost[]): ReportSummary {
  const states: Record<HostState, number> = { ok: 0, failed: 0, unreachable: 0, unfinished: 0 };
  const results: Record<EntryStatus, number> = { ok: 0, changed: 0, failed: 0, unreachable: 0, skipped: 0, rescued: 0, ignored: 0, interrupted: 0, unfinished: 0 };
  let retries = 0;
  for (const h of hosts) {
    states[h.state]++;
    retries += h.retries;
    for (const e of h.entries) results[e.status]++;
  }
  return {
    hosts: states,
    results,
    wallMs: runs.reduce((s, r) => s + r.durationMs, 0),
    retries,
    retriedHosts: hosts
      .filter((h) => h.retries > 0)
      .sort((a, b) => b.retries - a.retries || naturalCompare(a.name, b.name))
      .slice(0, TOP)
      .map((h) => ({ host: h.name, retries: h.retries, last: [...h.entries].reverse().find((e) => e.retryMsg)?.retryMsg ?? '' })),
    slowestHosts: [...hosts]
      .sort((a, b) => b.totalMs - a.totalMs || naturalCompare(a.name, b.name))
      .slice(0, TOP)
      .map((h) => ({ host: h.name, totalMs: h.totalMs })),
    phases: phases(hosts, tasks),
    failures: failures(hosts, tasks),
  };
}
