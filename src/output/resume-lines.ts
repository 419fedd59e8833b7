// The lines a resumed run prints once per play (the `resume` event), shared by the plain and
// TTY renderers: what it takes over instead of a "done in the resumed run" line per task.
import type { EventOf } from './events.js';

const MAX_NAMES = 8;

/** `node01, node02, node03 and 5 more`. */
function names(hosts: readonly string[]): string {
  const shown = hosts.slice(0, MAX_NAMES).join(', ');
  return hosts.length > MAX_NAMES ? `${shown} and ${hosts.length - MAX_NAMES} more` : shown;
}

export function resumeLines(e: EventOf<'resume'>): string[] {
  const lines: string[] = [];
  const byCount = new Map<number, string[]>();
  for (const [h, n] of Object.entries(e.done)) byCount.set(n, [...(byCount.get(n) ?? []), h]);
  const groups = [...byCount].sort((a, b) => b[0] - a[0]);
  if (groups.length) {
    const parts = groups.map(([n, hs]) => `${n} task${n === 1 ? '' : 's'} on ${names(hs.sort())}`);
    lines.push(`resumed: done in run ${e.from}, not run again: ${parts.join('; ')}`);
  }
  if (e.restart?.length) lines.push(`resumed: from the start of the play: ${names([...e.restart].sort())} (nothing done before counts)`);
  for (const [h, why] of Object.entries(e.failed ?? {}).sort()) {
    lines.push(`resumed: ${h} stays failed (${why}); --retry-failed runs it again from the start`);
  }
  return lines;
}
