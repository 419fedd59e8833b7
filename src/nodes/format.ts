// `tsbm nodes list` and `tsbm nodes show` as text: what tsbm knows of each machine.
import { iso, table } from '../journal/format.js';
import type { NodeRecord } from './types.js';

export function formatNodeList(records: readonly NodeRecord[], where: string): string {
  if (records.length === 0) return `no node records (${where})\n`;
  const rows = [['NODE', 'STATE', 'PROTECTED', 'IMAGE', 'UPDATED (UTC)', 'RUN', 'KEY']];
  for (const r of records) {
    rows.push([r.name, r.provisionState, r.protected ? 'yes' : 'no', r.image ?? '-', iso(r.updated), r.runId ?? '-', r.key]);
  }
  return table(rows);
}

export function formatNodeShow(r: NodeRecord): string {
  const lines: [string, string | undefined][] = [
    ['node', r.name],
    ['key', r.key],
    ['system', r.system],
    ['state', r.provisionState],
    ['active since', r.activeSince ? `${iso(r.activeSince)} UTC` : undefined],
    ['protected', r.protected ? `yes${r.protectedReason ? ` (${r.protectedReason})` : ''}` : 'no'],
    ['image', r.image],
    ['playbook', r.playbook],
    ['run', r.runId],
    ['last error', r.lastError],
    ['power', r.power ? `${r.power.state} (read ${iso(r.power.read)} UTC)` : undefined],
    ['media', r.media ? `${r.media.inserted ? 'inserted' : 'none'} (read ${iso(r.media.read)} UTC)` : undefined],
    ['updated', `${iso(r.updated)} UTC (version ${r.version})`],
  ];
  const shown = lines.filter((l): l is [string, string] => l[1] !== undefined);
  const w = Math.max(...shown.map(([k]) => k.length));
  return shown.map(([k, v]) => `${`${k}:`.padEnd(w + 2)}${v}`).join('\n') + '\n';
}
