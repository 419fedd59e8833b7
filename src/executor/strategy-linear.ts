// Linear strategy (Ansible's default): each step runs across all hosts of the batch before
// the next one. Hosts whose next step differs (one is in a rescue section, say) wait; the
// step earliest in the play's tree goes first.
import { type Outcome, type Step, type TaskStep, walkPlay } from './host-walker.js';
import { flushHandlers } from './handlers.js';
import type { PlayRuntime } from './play-runtime.js';
import { runTaskGroup } from './task-group.js';
import { walkEnv } from './walk-env.js';
import { applyFailPolicy } from './fail-policy.js';
import { stepWhy } from './walk-env.js';

type Walker = Generator<Step, unknown, Outcome>;

export function comparePaths(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return a.length - b.length;
}

export async function runLinear(pr: PlayRuntime, batch: readonly string[]): Promise<void> {
  const walkers = new Map<string, Walker>();
  const next = new Map<string, Step>();
  const advance = (h: string, o: Outcome) => {
    const r = walkers.get(h)!.next(o);
    if (r.done) next.delete(h);
    else next.set(h, r.value);
  };
  for (const h of batch) {
    walkers.set(h, walkPlay(walkEnv(pr, h)));
    advance(h, { status: 'ok' });
  }
  try {
    while (next.size > 0 && !pr.state.interrupted && !pr.endPlay) {
      let first: Step | undefined;
      for (const s of next.values()) if (!first || comparePaths(s.path, first.path) < 0) first = s;
      const step = first!;
      const hosts = [...next].filter(([, s]) => s.key === step.key).map(([h]) => h);
      // Steps with one key are one task, but each host brings its own (an include's result differs per host).
      const own = new Map(hosts.map((h) => [h, next.get(h) as TaskStep]));
      const outcomes =
        step.kind === 'task' ? await runTaskGroup(pr, step, hosts, false, own) : await flushHandlers(pr, hosts);
      // The fail policy first, so walkers see end_play before choosing their next step.
      if (step.kind === 'task') applyFailPolicy(pr, step, batch, outcomes);
      for (const h of hosts) advance(h, outcomes.get(h) ?? { status: 'ok' });
    }
    // Hosts with steps left when the run was interrupted did not finish the play.
    if (pr.state.interrupted) for (const [h, s] of next) pr.state.leave(h, stepWhy(pr, s));
  } finally {
    for (const w of walkers.values()) w.return(undefined);
  }
}
