// --resume: what a previous run's journal says each host already did. A task counts as done on
// a host when its final result (not a loop item's) was ok, changed or skipped; the variables
// tasks set (register, set_fact, facts) come back in the order they were set. The executor
// skips done tasks (unless they say `resume: rerun`) and restores the variables.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TsbmError } from '../errors.js';
import type { Vars } from '../types.js';
import { type JournalContents, readJournal } from './reader.js';
import { scopeOf } from './scope.js';

export interface ResumeState {
  runId: string;
  completed(host: string, taskId: string): boolean;
  restore(host: string): Vars | undefined;
}

const DONE = new Set(['ok', 'changed', 'skipped']);

/**
 * `check`: whether the resuming run is in check mode. Only results of runs in the same mode
 * count: a task "done" in check mode did nothing, so it is never done for a real run.
 */
export function resumeStateFrom(journal: JournalContents, now: { check: boolean }): ResumeState {
  const runId = journal.header?.runId;
  if (!runId) {
    throw new TsbmError('options', `${journal.file} is not a run journal (no header)`, { hint: 'pass a run id from `tsbm runs list`' });
  }
  const done = new Map<string, Set<string>>();
  const vars = new Map<string, Vars>();
  // A resumed run that is itself killed before reaching a host's skipped tasks never records
  // them; so the state is the whole chain of resumes, oldest first, a later result overriding.
  for (const j of resumeChain(journal)) {
    if (j.header && scopeOf(j.header).check !== now.check) continue;
    for (const r of j.records) {
      if (r.type !== 'host_result' || r.item !== undefined) continue;
      const s = done.get(r.host) ?? new Set<string>();
      if (DONE.has(r.status)) s.add(r.taskId);
      else s.delete(r.taskId); // failed or unreachable since: to be run again
      done.set(r.host, s);
      if (r.vars) {
        const v = vars.get(r.host) ?? {};
        for (const [k, val] of Object.entries(r.vars)) {
          const old = v[k];
          v[k] = (k === 'facts' || k === 'ansible_facts') && isMap(old) && isMap(val) ? { ...old, ...val } : val;
        }
        vars.set(r.host, v);
      }
    }
  }
  return {
    runId,
    completed: (host, taskId) => done.get(host)?.has(taskId) ?? false,
    restore: (host) => vars.get(host),
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
