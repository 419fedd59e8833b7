// Free strategy: every host goes through the play at its own pace (forks still bound how
// many tasks run at once).
import { type Outcome, walkPlay } from './host-walker.js';
import { flushHandlers } from './handlers.js';
import type { PlayRuntime } from './play-runtime.js';
import { runTaskGroup } from './task-group.js';
import { walkEnv } from './walk-env.js';
import { applyFailPolicy } from './fail-policy.js';

export async function runFree(pr: PlayRuntime, batch: readonly string[]): Promise<void> {
  await Promise.all(
    batch.map(async (h) => {
      const w = walkPlay(walkEnv(pr, h));
      let o: Outcome = { status: 'ok' };
      try {
        for (;;) {
          if (pr.endPlay) break;
          const r = w.next(o);
          if (r.done) break;
          if (pr.state.interrupted) {
            pr.state.unfinished.add(h); // a step was left to run
            break;
          }
          const step = r.value;
          const res = step.kind === 'task' ? await runTaskGroup(pr, step, [h]) : await flushHandlers(pr, [h]);
          o = res.get(h) ?? { status: 'ok' };
          if (step.kind === 'task') applyFailPolicy(pr, step, batch, res);
        }
      } finally {
        w.return('ended');
      }
    }),
  );
}
