// The PLAY RECAP block: one line per host with every counter, a line for each host that did not
// end ok (its outcome, and its node as the run left it), then the run's wall time. Shared by
// the tty and plain renderers so both print the same figures.
import { type Paint, painter } from './color.js';
import type { HostStats } from './events.js';
import { formatDuration, oneLine } from './format.js';
import { type HostEnd, nodeText } from './host-outcome.js';

const COUNTERS: (keyof HostStats)[] = ['ok', 'changed', 'unreachable', 'failed', 'skipped', 'rescued', 'ignored'];

function hostColor(s: HostStats, end: HostEnd | undefined): 'red' | 'yellow' | 'green' | 'magenta' {
  if (s.failed > 0 || s.unreachable > 0 || end?.outcome === 'failed' || end?.outcome === 'unreachable') return 'red';
  if (end?.outcome === 'unfinished') return 'magenta';
  return s.changed > 0 ? 'yellow' : 'green';
}

const nothingRan = (s: HostStats) => COUNTERS.every((c) => (s[c] ?? 0) === 0);

/** Lines of the recap, hosts sorted by name, names padded so the counters line up. */
export function recapLines(
  stats: Record<string, HostStats>,
  durationMs: number,
  paint: Paint = painter(false),
  ends: Record<string, HostEnd> = {},
): string[] {
  const hosts = Object.keys(stats).sort();
  const width = Math.max(0, ...hosts.map((h) => h.length));
  const lines = ['PLAY RECAP'];
  const notes: string[] = [];
  for (const h of hosts) {
    const s = stats[h]!;
    const end = ends[h];
    const name = paint(hostColor(s, end), h.padEnd(width));
    // A host the run never started on (a refused lock, an interrupt before its play) is said so,
    // not shown as a row of zeros.
    if (end?.outcome === 'unfinished' && nothingRan(s)) {
      lines.push(`${name} : ${paint('magenta', 'not started')}${end.reason ? ` (${oneLine(end.reason.replace(/^not started: /, ''))})` : ''}`);
    } else {
      const counters = COUNTERS.map((c) => `${c}=${s[c] ?? 0}`.padEnd(c.length + 5)).join(' ').trimEnd();
      lines.push(`${name} : ${counters}`);
      if (end && end.outcome !== 'ok') notes.push(`  ${h}: ${paint(end.outcome === 'unfinished' ? 'magenta' : 'red', end.outcome)}${end.reason ? `: ${oneLine(end.reason)}` : ''}`);
    }
    if (end?.node && end.outcome !== 'ok') notes.push(`  ${h}: node ${nodeText(end.node)}${end.node.error ? ` (${oneLine(end.node.error)})` : ''}`);
  }
  lines.push(...notes);
  lines.push(`Wall time: ${formatDuration(durationMs)}`);
  return lines;
}
