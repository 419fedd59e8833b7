// Free strategy: every host goes through the play at its own pace (forks still bound how
// many tasks run at once). One exception keeps any_errors_fatal's promise: a host that has run
// a task under any_errors_fatal waits there until every host of the batch has run it too (or
// can no longer reach it), so no host goes past it while its outcome elsewhere may still end
// the play. The deploy playbooks' `preflight_on_failure: stop` relies on this: no node is
// touched before every node has passed its preflight (with `continue`, the condition is false
// and nobody waits).
import { type Outcome, walkPlay } from './host-walker.js';
import { flushHandlers } from './handlers.js';
import type { PlayRuntime } from './play-runtime.js';
import { runTaskGroup } from './task-group.js';
import { walkEnv } from './walk-env.js';
import { applyFailPolicy, isFatal } from './fail-policy.js';
import { taskVars } from './task-vars.js';
import { effectiveKeywords } from './keywords.js';
import { FreeBarrier } from './free-barrier.js';
import { stepWhy } from './walk-env.js';

export async function runFree(pr: PlayRuntime, batch: readonly string[]): Promise<void> {
  const barrier = new FreeBarrier(batch, () => pr.endPlay || pr.state.interrupted);
  await Promise.all(
    batch.map(async (h) => {
      const w = walkPlay(walkEnv(pr, h));
      let o: Outcome = { status: 'ok' };
      /** The path of an any_errors_fatal task this host ran last, where it waits for the others. */
      let fatalAt: readonly number[] | undefined;
      try {
        for (;;) {
          if (pr.endPlay) break;
          const r = w.next(o);
          if (r.done) break;
          const step = r.value;
          barrier.at(h, step.path);
          if (fatalAt) {
            await barrier.passedByAll(fatalAt);
            fatalAt = undefined;
            if (pr.endPlay) break;
          }
          if (pr.state.interrupted) {
            pr.state.leave(h, stepWhy(pr, step)); // a step was left to run
            break;
          }
          const res = step.kind === 'task' ? await runTaskGroup(pr, step, [h]) : await flushHandlers(pr, [h]);
          o = res.get(h) ?? { status: 'ok' };
          if (step.kind === 'task') {
            applyFailPolicy(pr, step, batch, res);
            // A host that skipped the task (its condition was false) has no outcome to wait for.
            // A conditional any_errors_fatal (a knob such as preflight_on_failure) is read with
            // this host's variables: where it says false, no failure here can end the play.
            const fatal = effectiveKeywords(pr.play, step.chain, step.task).anyErrorsFatal;
            const task = step.task;
            const waits =
              fatal !== false &&
              isFatal(pr, fatal, h, { pos: task.keyPos.any_errors_fatal ?? task.pos, task: task.name ?? task.module, baseDir: task.baseDir }, () =>
                taskVars(pr, h, step.chain, task),
              );
            if (!o.notRun && waits) fatalAt = step.path;
          }
        }
      } finally {
        barrier.left(h);
        w.return('ended');
      }
    }),
  );
}
