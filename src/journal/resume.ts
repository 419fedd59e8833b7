// --resume: what a previous run's journal says each host already did, and how each host goes
// on. A run continues what was interrupted, nothing else:
// - a host that ended ok is done (every task it finished is skipped);
// - a host that failed (or was unreachable) stays failed: it is not run again, unless
//   --retry-failed, which runs it from the start, nothing it had done counting (a cleanup may
//   have undone it);
// - an unfinished host continues where it stopped, unless the run ended it safe (powered off,
//   media ejected): then it starts again, since the steps it had done (the ramdisk booted) no
//   longer hold.
// A task counts as done on a continuing host when its final result (not a loop item's) was ok,
// changed or skipped in any run of the chain since the host last started again; the variables
// tasks set come back in the order they were set. The executor skips done tasks (unless they say
// `resume: rerun`) and restores the variables.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TsbmError } from '../errors.js';
import type { Vars } from '../types.js';
import { hostEnds } from './outcomes.js';
import { type JournalContents, readJournal } from './reader.js';
import { scopeOf } from './scope.js';

export interface ResumeState {
  runId: string;
  /** Every run of the chain this resume continues (their records are this run's to finish). */
  chain: ReadonlySet<string>;
  completed(host: string, taskId: string): boolean;
  restore(host: string): Vars | undefined;
  /** Hosts that failed in the resumed run and stay failed, with their failure. */
  staysFailed(host: string): string | undefined;
  /** Hosts that start again from the start of the play (retried, or ended safe after an interrupt). */
  restarts(host: string): boolean;
}

const DONE = new Set(['ok', 'changed', 'skipped']);

/** The task id of the run's own step that ends an unfinished node safe (src/run/). */
export const END_SAFE_TASK_ID = 'tsbm:end-safe';

interface HostHistory {
  done: Set<string>;
  vars: Vars;
  /** The outcome in the latest run of the chain that speaks of the host. */
  outcome?: 'ok' | 'failed' | 'unreachable' | 'unfinished';
  reason?: string;
  runId?: string;
  /** That run ended it safe (after an interrupt): what it had done no longer holds. */
  endedSafe?: boolean;
}

/**
 * `check`: whether the resuming run is in check mode. Only results of runs in the same mode
 * count: a task "done" in check mode did nothing, so it is never done for a real run.
 * `retryFailed`: hosts that failed start again from the start instead of staying failed.
 */
export function resumeStateFrom(journal: JournalContents, now: { check: boolean; retryFailed?: boolean }): ResumeState {
  const runId = journal.header?.runId;
  if (!runId) {
    throw new TsbmError('options', `${journal.file} is not a run journal (no header)`, { hint: 'pass a run id from `tsbm runs list`' });
  }
  const hosts = new Map<string, HostHistory>();
  const of = (h: string) => {
    let x = hosts.get(h);
    if (!x) {
      x = { done: new Set(), vars: {} };
      hosts.set(h, x);
    }
    return x;
  };
  // A resumed run that is itself killed before reaching a host's skipped tasks never records
  // them; so the state is the whole chain of resumes, oldest first, a later result overriding.
  for (const j of resumeChain(journal)) {
    if (j.header && scopeOf(j.header).check !== now.check) continue;
    for (const r of j.records) {
      if (r.type === 'resume') {
        // The run started these hosts again: what earlier runs had done of theirs is gone.
        for (const h of r.restart ?? []) hosts.set(h, { done: new Set(), vars: {} });
        continue;
      }
      if (r.type !== 'host_result' || r.item !== undefined) continue;
      const x = of(r.host);
      if (r.taskId === END_SAFE_TASK_ID) continue;
      if (DONE.has(r.status)) x.done.add(r.taskId);
      else x.done.delete(r.taskId); // failed or unreachable since: to be run again
      if (r.vars) {
        for (const [k, val] of Object.entries(r.vars)) {
          const old = x.vars[k];
          x.vars[k] = (k === 'facts' || k === 'ansible_facts') && isMap(old) && isMap(val) ? { ...old, ...val } : val;
        }
      }
    }
    const ends = hostEnds(j.records);
    const safe = new Set(
      j.records.flatMap((r) => (r.type === 'host_result' && r.taskId === END_SAFE_TASK_ID && (r.status === 'ok' || r.status === 'changed') ? [r.host] : [])),
    );
    for (const [h, end] of ends.hosts) {
      const x = of(h);
      x.outcome = end.outcome;
      x.reason = end.reason;
      x.runId = j.header?.runId;
      x.endedSafe = end.outcome === 'unfinished' && safe.has(h);
    }
  }
  const restarts = (h: string) => {
    const x = hosts.get(h);
    if (!x) return false;
    return x.endedSafe === true || (now.retryFailed === true && (x.outcome === 'failed' || x.outcome === 'unreachable'));
  };
  return {
    runId,
    chain: new Set(resumeChain(journal).flatMap((j) => (j.header ? [j.header.runId] : []))),
    completed: (host, taskId) => !restarts(host) && (hosts.get(host)?.done.has(taskId) ?? false),
    restore: (host) => (restarts(host) ? undefined : hosts.get(host)?.vars),
    staysFailed: (host) => {
      const x = hosts.get(host);
      if (!x || now.retryFailed || (x.outcome !== 'failed' && x.outcome !== 'unreachable')) return undefined;
      // A host that stayed failed through several resumes keeps the run it failed in.
      if (x.reason?.startsWith('failed in run ')) return x.reason;
      return `failed in run ${x.runId}: ${x.reason ?? x.outcome}`;
    },
    restarts,
  };
}

/** The journal and the ones it resumed from (same directory), oldest first; a missing link ends the chain. */
export function resumeChain(journal: JournalContents): JournalContents[] {
  const chain = [journal];
  const seen = new Set([journal.header?.runId]);
  let from = journal.header?.resumedFrom;
  while (from && !seen.has(from) && chain.length < 10_000) {
    seen.add(from);
    const file = join(dirname(journal.file), `${from}.jsonl`);
    if (!existsSync(file)) break;
    const prev = readJournal(file);
    chain.unshift(prev);
    from = prev.header?.resumedFrom;
  }
  return chain;
}

function isMap(v: unknown): v is Vars {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/** Refuses a resume whose playbook or inventory changed since the journal was written. */
export function checkResumable(
  journal: JournalContents,
  now: { playbookHash: string; inventoryHash: string },
  force: boolean,
): void {
  const h = journal.header!;
  const changed = [
    h.playbookHash !== now.playbookHash ? 'the playbook (or a role/file it uses)' : '',
    h.inventoryHash !== now.inventoryHash ? 'the inventory (or a --limit @file)' : '',
  ].filter(Boolean);
  if (changed.length && !force) {
    throw new TsbmError('options', `cannot resume run ${h.runId}: ${changed.join(' and ')} changed since it ran`, {
      hint: 'resume with the same files, or add --force to resume anyway (done tasks are still skipped)',
    });
  }
}
