// After a serial batch (a play without `serial` is one batch): whether the run goes on. As in
// ansible-playbook 2.14, a batch whose every host failed or was unreachable (hosts that
// max_fail_percentage or any_errors_fatal stopped count as failed) ends the play and the whole
// run: later batches and later plays do not start, and the run exits non-zero. For a rolling
// redeploy this is the safe direction: a bad image stops at the first batch it broke.
// One deliberate difference: tsbm counts unreachable hosts towards max_fail_percentage
// (ansible-playbook 2.14 counts failed ones only), since an unreachable node mid-deploy is a
// node the rollout broke (docs/executor.md, "Failures").
import { exceedsMaxFail, isFatal, stopBatch } from './fail-policy.js';
import type { PlayRuntime } from './play-runtime.js';
import { playVars } from './task-vars.js';

/** Why the run stops after this batch, or undefined when the play goes on to its next batch. */
export function runStopAfterBatch(pr: PlayRuntime, batch: readonly string[], index: number, batches: number): string | undefined {
  const { play, state } = pr;
  const out = (h: string) => state.host(h).failed || state.host(h).unreachable;
  const failed = batch.filter(out);
  const fatal = (h: string) =>
    isFatal(pr, play.anyErrorsFatal, h, { pos: play.keyPos.any_errors_fatal ?? play.pos, baseDir: play.baseDir }, () => playVars(pr, h));
  let why: string | undefined;
  if (exceedsMaxFail(pr, batch)) why = `more than max_fail_percentage ${play.maxFailPercentage}% of its hosts failed`;
  else if (failed.some(fatal)) why = 'a host failed under any_errors_fatal';
  if (why) stopBatch(pr, batch);
  else if (batch.every((h) => out(h) || state.host(h).stopped)) why = 'every host of it failed';
  if (!why) return undefined;
  const which = batches > 1 ? `serial batch ${index + 1} of ${batches}` : 'the batch';
  return `play '${play.name}': ${which} (${batch.length} host${batch.length === 1 ? '' : 's'}): ${why}; the run stops here, as ansible-playbook's does (later batches and plays do not start)`;
}
