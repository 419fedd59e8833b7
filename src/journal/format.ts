// Plain-text tables for `tsbm runs list|show`.
import { nodeText } from '../output/host-outcome.js';
import type { HostProgress, JournalContents, RunSummary } from './reader.js';
import { modeLabel, scopeOf } from './scope.js';

export const iso = (ms: number | undefined) => (ms ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) : '-');

export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd()).join('\n') + '\n';
}

export function formatRunList(runs: RunSummary[]): string {
  if (runs.length === 0) return 'no runs recorded\n';
  const rows = [['RUN', 'STARTED (UTC)', 'HOSTS', 'LIMIT', 'MODE', 'STATE', 'PLAYBOOK']];
  for (const r of runs) {
    const state = r.finished ? `exit ${r.exitCode}` : 'unfinished';
    rows.push([
      r.runId,
      iso(r.started),
      String(r.hosts),
      r.limit ?? (r.mode ? 'all' : '-'),
      r.mode ?? '-',
      r.resumedFrom ? `${state} (resumed ${r.resumedFrom})` : state,
      r.playbook ?? '-',
    ]);
  }
  return table(rows);
}

export function formatRunShow(j: JournalContents, hosts: HostProgress[]): string {
  const end = j.records.find((r) => r.type === 'run_end');
  const scope = j.header ? scopeOf(j.header) : undefined;
  const names = scope?.extraVars ? Object.keys(scope.extraVars.hashes) : [];
  const head = [
    `run ${j.header?.runId ?? '?'}  playbook ${j.header?.playbook ?? '?'}${j.header?.resumedFrom ? `  (resumed ${j.header.resumedFrom})` : ''}`,
    scope
      ? [
          `limit ${scope.limit ?? 'all'}`,
          `mode ${modeLabel(scope)}`,
          scope.shard ? `shard ${scope.shard.index}/${scope.shard.total}` : '',
          scope.tags.length ? `tags ${scope.tags.join(',')}` : '',
          scope.skipTags.length ? `skip-tags ${scope.skipTags.join(',')}` : '',
          scope.startAtTask !== undefined ? `start at ${JSON.stringify(scope.startAtTask)}` : '',
          names.length ? `extra vars ${names.join(', ')}` : '',
        ]
          .filter(Boolean)
          .join('  ')
      : '',
    `started ${iso(j.header?.time)}  ${end?.type === 'run_end' ? `ended with exit ${end.exitCode}` : 'did not finish (resume it with `tsbm run ... --resume`)'}`,
    j.badLines ? `(${j.badLines} unreadable line(s) ignored: the run was probably killed mid-write)` : '',
  ].filter(Boolean);
  const nodes = hosts.some((h) => h.node);
  const rows = [['HOST', 'STATE', 'OK', 'CHANGED', 'FAILED', 'UNREACHABLE', 'SKIPPED', 'LAST TASK', ...(nodes ? ['NODE'] : [])]];
  for (const h of hosts) {
    const s = h.stats;
    const node = nodes ? [h.node ? nodeText(h.node) : '-'] : [];
    rows.push([h.host, h.state, String(s.ok), String(s.changed), String(s.failed), String(s.unreachable), String(s.skipped), h.lastTask ?? '-', ...node]);
  }
  const failures = hosts.flatMap((h) => h.failures.map((f) => `  ${h.host}: ${f.task}: ${f.msg}`));
  const left = hosts.filter((h) => h.state === 'unfinished' && h.reason).map((h) => `  ${h.host}: ${h.reason}`);
  return `${head.join('\n')}\n\n${table(rows)}${failures.length ? `\nfailures:\n${failures.join('\n')}\n` : ''}${left.length ? `\nunfinished:\n${left.join('\n')}\n` : ''}`;
}
