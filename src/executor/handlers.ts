// Runs notified handlers for a set of hosts, in the order the play defines them. A handler
// notified by another handler runs in the same flush (if later) or in another pass.
import type { Handler } from '../playbook/model.js';
import type { Outcome, TaskStep } from './host-walker.js';
import type { PlayRuntime } from './play-runtime.js';
import { runTaskGroup } from './task-group.js';
import { forceHandlers } from './walk-env.js';

let flushCount = 0;

export async function flushHandlers(pr: PlayRuntime, hosts: readonly string[]): Promise<Map<string, Outcome>> {
  const out = new Map<string, Outcome>(hosts.map((h) => [h, { status: 'ok' }]));
  // Under force_handlers a failed host runs its handlers too (an unreachable one cannot).
  const force = forceHandlers(pr);
  const live = () =>
    hosts.filter((h) => out.get(h)!.status === 'ok' && (force || !pr.state.host(h).failed) && !pr.state.host(h).unreachable && !pr.state.host(h).ended);
  for (let pass = 0; pass < 10; pass++) {
    let ran = false;
    for (const [i, handler] of pr.play.handlers.entries()) {
      if (pr.state.interrupted || pr.endPlay) return out;
      const due = live().filter((h) => pr.state.host(h).notified.has(handler));
      if (due.length === 0) continue;
      for (const h of due) pr.state.host(h).notified.delete(handler);
      ran = true;
      const res = await runTaskGroup(pr, handlerStep(handler, i), due, true);
      for (const [h, o] of res) if (o.status !== 'ok') out.set(h, o);
    }
    if (!ran) break;
  }
  return out;
}

function handlerStep(h: Handler, i: number): TaskStep {
  // A fresh key per flush: the same handler may run again after a later notify.
  const key = `handler.${i}.${++flushCount}#${h.id}`;
  return { kind: 'task', task: h, chain: [], path: [], key, rescuable: false };
}
