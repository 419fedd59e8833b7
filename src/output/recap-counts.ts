// How one task result adds to its host's recap counters. The rules are ansible-playbook 2.14's
// (its strategy's result processing), so a recap reads the same in both tools:
// - ok counts every result that did not fail, changed ones also in changed;
// - an ignored failure counts in ok and ignored, and in changed when the result says changed
//   (a failing `command` does); an ignored unreachable host counts in ok and ignored;
// - a failure an enclosing block rescues counts in rescued only;
// - a loop counts once, by its task's result (never per item).
// The executor records these counts on each host_result event; the recap, the journal's
// progress table and JUnit all read them from there.
import type { HostStats, HostStatus } from './events.js';

export type Counts = Partial<HostStats>;

export function countsFor(status: HostStatus, changed: boolean): Counts {
  switch (status) {
    case 'ok':
      return { ok: 1 };
    case 'changed':
      return { ok: 1, changed: 1 };
    case 'ignored':
      return changed ? { ok: 1, changed: 1, ignored: 1 } : { ok: 1, ignored: 1 };
    case 'skipped':
      return { skipped: 1 };
    case 'failed':
      return { failed: 1 };
    case 'rescued':
      return { rescued: 1 };
    case 'unreachable':
      return { unreachable: 1 };
    case 'interrupted':
      // stopped by the run, not by the host: no counter (its outcome says unfinished)
      return {};
  }
}

export function addCounts(into: HostStats, c: Counts): void {
  for (const [k, v] of Object.entries(c) as [keyof HostStats, number][]) into[k] += v;
}
