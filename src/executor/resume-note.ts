// What a resumed run takes over, said once per play (the `resume` event) instead of a "done in
// the resumed run" line per task and host: how many of the play's tasks each host had finished,
// which hosts start again from the start, and which stay failed.
import { playNodes, staticTasks } from '../playbook/static-tasks.js';
import type { PlayRuntime } from './play-runtime.js';

/** Hosts whose start-again was announced: the journal records it once per run (resume.ts clears their past there). */
const announced = new WeakMap<object, Set<string>>();

export function announceResume(pr: PlayRuntime, hosts: readonly string[], skipped: readonly string[]): void {
  const hooks = pr.deps.hooks;
  if (!hooks?.resumedFrom) return;
  const tasks = staticTasks(playNodes(pr.play));
  const done: Record<string, number> = {};
  const restart: string[] = [];
  const seen = announced.get(pr.state) ?? new Set<string>();
  announced.set(pr.state, seen);
  for (const h of hosts) {
    if (hooks.restarts?.(h)) {
      if (!seen.has(h)) restart.push(h);
      seen.add(h);
      continue;
    }
    const n = tasks.filter((t) => hooks.completed?.(h, t.id)).length;
    if (n > 0) done[h] = n;
  }
  const failed: Record<string, string> = {};
  for (const h of skipped) {
    const why = hooks.staysFailed?.(h);
    if (why !== undefined && !seen.has(h)) {
      failed[h] = why;
      seen.add(h);
    }
  }
  if (Object.keys(done).length === 0 && restart.length === 0 && Object.keys(failed).length === 0) return;
  pr.bus.emit({
    type: 'resume',
    time: Date.now(),
    play: pr.play.name,
    from: hooks.resumedFrom,
    done,
    ...(restart.length ? { restart } : {}),
    ...(Object.keys(failed).length ? { failed } : {}),
  });
}
