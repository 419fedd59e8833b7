// The PLAY RECAP block: one line per host with every counter, then the run's wall time.
// Shared by the tty and plain renderers so both print the same figures.
import { type Paint, painter } from './color.js';
import type { HostStats } from './events.js';
import { formatDuration } from './format.js';

const COUNTERS: (keyof HostStats)[] = ['ok', 'changed', 'unreachable', 'failed', 'skipped', 'rescued', 'ignored'];

function hostColor(s: HostStats): 'red' | 'yellow' | 'green' {
  if (s.failed > 0 || s.unreachable > 0) return 'red';
  return s.changed > 0 ? 'yellow' : 'green';
}

/** Lines of the recap, hosts sorted by name, names padded so the counters line up. */
export function recapLines(
  stats: Record<string, HostStats>,
  durationMs: number,
  paint: Paint = painter(false),
): string[] {
  const hosts = Object.keys(stats).sort();
  const width = Math.max(0, ...hosts.map((h) => h.length));
  const lines = ['PLAY RECAP'];
  for (const h of hosts) {
    const s = stats[h]!;
    const counters = COUNTERS.map((c) => `${c}=${s[c] ?? 0}`.padEnd(c.length + 5)).join(' ').trimEnd();
    lines.push(`${paint(hostColor(s), h.padEnd(width))} : ${counters}`);
  }
  lines.push(`Wall time: ${formatDuration(durationMs)}`);
  return lines;
}
