// any_errors_fatal and max_fail_percentage: after a task, decide whether the whole batch
// stops. Its hosts leave the run (not counted as failed in the recap), as in Ansible.
// any_errors_fatal may be a condition, evaluated with each failed host's variables (a knob such
// as `preflight_on_failure: stop` then needs one task, not a copy with and one without).
import { type SourcePos, TsbmError } from '../errors.js';
import { evalCondition } from '../template/index.js';
import type { Outcome, TaskStep } from './host-walker.js';
import { effectiveKeywords } from './keywords.js';
import { lazyVars } from './lazy-vars.js';
import type { PlayRuntime } from './play-runtime.js';
import { taskVars } from './task-vars.js';
import type { Vars } from '../types.js';

export function applyFailPolicy(
  pr: PlayRuntime,
  step: TaskStep,
  batch: readonly string[],
  outcomes: Map<string, Outcome>,
): void {
  const failed = [...outcomes]
    .filter(([h, o]) => o.status !== 'ok' && (pr.state.host(h).failed || pr.state.host(h).unreachable))
    .map(([h]) => h);
  if (failed.length === 0) return;
  const fatal = effectiveKeywords(pr.play, step.chain, step.task).anyErrorsFatal;
  const task = step.task;
  const at = {
    pos: task.keyPos.any_errors_fatal ?? task.pos,
    task: pr.names.get(step.key) ?? task.name ?? task.module,
    baseDir: task.baseDir,
  };
  const fatalFor = (h: string) => isFatal(pr, fatal, h, at, () => taskVars(pr, h, step.chain, task));
  if (exceedsMaxFail(pr, batch) || failed.some(fatalFor)) stopBatch(pr, batch);
}

/**
 * any_errors_fatal for one failed host: a boolean, or a condition evaluated with the host's
 * variables. A condition that cannot be evaluated counts as fatal (the safe side), with a warning.
 */
export function isFatal(
  pr: PlayRuntime,
  fatal: boolean | string,
  host: string,
  at: { pos: SourcePos; task?: string; baseDir: string },
  vars: () => Vars,
): boolean {
  if (typeof fatal === 'boolean') return fatal;
  const where = { ...at, host, onSecret: (v: string) => pr.redactor.add(v) };
  try {
    return evalCondition(fatal, { ...where, vars: lazyVars(vars(), where) });
  } catch (e) {
    pr.bus.emit({
      type: 'warning',
      time: Date.now(),
      host,
      ...(at.task ? { task: at.task } : {}),
      message: `any_errors_fatal could not be evaluated, so the play stops for every host: ${e instanceof TsbmError ? e.oneLine() : String(e)}`,
    });
    return true;
  }
}

export function exceedsMaxFail(pr: PlayRuntime, batch: readonly string[]): boolean {
  const max = pr.play.maxFailPercentage;
  if (max === undefined) return false;
  const failed = batch.filter((h) => pr.state.host(h).failed || pr.state.host(h).unreachable).length;
  return (failed / batch.length) * 100 > max;
}

/** Ends the play and keeps the batch's hosts out of later plays. */
export function stopBatch(pr: PlayRuntime, batch: readonly string[]): void {
  pr.endPlay = true;
  for (const h of batch) pr.state.host(h).stopped = true;
}
