// How each host ended one recorded run, read back from its journal: the recap's outcomes when
// the run got that far (src/output/host-outcome.ts); otherwise (a run killed before its recap,
// a journal of an older version) derived from the results it recorded.
import type { HostEnd } from '../output/host-outcome.js';
import type { JournalRecord } from './records.js';

export interface RecordedEnds {
  /** The run wrote its end (run_end): the outcomes are the run's own. */
  ended: boolean;
  hosts: Map<string, HostEnd>;
}

export function hostEnds(records: readonly JournalRecord[]): RecordedEnds {
  let recap: Extract<JournalRecord, { type: 'recap' }> | undefined;
  let unfinished: string[] = [];
  let ended = false;
  const fell = new Map<string, HostEnd>();
  const seen = new Set<string>();
  const rescued = new Map<string, string>();
  for (const r of records) {
    if (r.type === 'play_start') for (const h of r.hosts) seen.add(h);
    else if (r.type === 'host_task_start') seen.add(r.host);
    else if (r.type === 'host_result' && r.item === undefined) {
      seen.add(r.host);
      const reason = `${r.task}: ${r.msg ?? r.status}`;
      if ((r.status === 'failed' || r.status === 'unreachable') && !fell.has(r.host)) fell.set(r.host, { outcome: r.status, reason });
      else if (r.status === 'rescued' && !rescued.has(r.host)) rescued.set(r.host, reason);
    } else if (r.type === 'recap') recap = r;
    else if (r.type === 'run_end') {
      ended = true;
      unfinished = r.unfinished ?? [];
    }
  }
  const hosts = new Map<string, HostEnd>();
  if (recap?.hosts) {
    for (const [h, end] of Object.entries(recap.hosts)) hosts.set(h, end);
    return { ended, hosts };
  }
  for (const h of [...seen, ...Object.keys(recap?.stats ?? {})]) {
    if (hosts.has(h)) continue;
    const stats = recap?.stats[h];
    const own = fell.get(h);
    if (own) hosts.set(h, own);
    else if (stats && (stats.unreachable > 0 || stats.failed > 0)) hosts.set(h, { outcome: stats.unreachable > 0 ? 'unreachable' : 'failed' });
    // A rescue the run never saw the end of: the host failed and its cleanup had begun.
    else if (!ended && rescued.has(h)) hosts.set(h, { outcome: 'failed', reason: `${rescued.get(h)} (the run ended during its rescue)` });
    else if (!ended) hosts.set(h, { outcome: 'unfinished', reason: 'the run did not finish (killed, or still running)' });
    else if (unfinished.includes(h)) hosts.set(h, { outcome: 'unfinished' });
    else hosts.set(h, { outcome: 'ok' });
  }
  return { ended, hosts };
}
