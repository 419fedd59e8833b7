// any_errors_fatal and max_fail_percentage: after a task, decide whether the whole batch
// stops. Its hosts leave the run (not counted as failed in the recap), as in Ansible.
import type { Outcome, TaskStep } from './host-walker.js';
import { effectiveKeywords } from './keywords.js';
import type { PlayRuntime } from './play-runtime.js';

export function applyFailPolicy(
  pr: PlayRuntime,
  step: TaskStep,
  batch: readonly string[],
  outcomes: Map<string, Outcome>,
): void {
  const failedNow = [...outcomes].some(
    ([h, o]) => o.status !== 'ok' && (pr.state.host(h).failed || pr.state.host(h).unreachable),
  );
  if (!failedNow) return;
  const fatal = effectiveKeywords(pr.play, step.chain, step.task).anyErrorsFatal;
  if (fatal || exceedsMaxFail(pr, batch)) stopBatch(pr, batch);
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
