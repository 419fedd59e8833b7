// Runs one step for a set of hosts: announces the task once, bounds concurrency by forks,
// and gives run_once tasks to the first host only (the others get its registered result).
import type { Outcome, TaskStep } from './host-walker.js';
import type { PlayRuntime } from './play-runtime.js';
import { runTaskOnHost, taskName } from './task-runner.js';
import { renderText } from '../template/index.js';
import { effectiveKeywords } from './keywords.js';
import { lazyVars } from './lazy-vars.js';
import { taskVars } from './task-vars.js';
import { inRescue } from './rescue-section.js';

function announce(pr: PlayRuntime, step: TaskStep, hosts: readonly string[], handler = false): void {
  if (pr.started.has(step.key)) return;
  pr.started.add(step.key);
  const name = displayName(pr, step, hosts[0]);
  pr.names.set(step.key, name);
  pr.bus.emit({
    type: 'task_start',
    time: Date.now(),
    play: pr.play.name,
    task: name,
    taskId: step.task.id,
    module: step.task.module,
    pos: step.task.pos,
    ...(handler ? { handler: true } : {}),
    ...(inRescue(step.chain, step.task) ? { rescue: true } : {}),
  });
}

export async function runTaskGroup(
  pr: PlayRuntime,
  step: TaskStep,
  hosts: readonly string[],
  handler = false,
  /** Each host's own step for this key, when they may differ (an include's preset result). */
  own?: ReadonlyMap<string, TaskStep>,
): Promise<Map<string, Outcome>> {
  announce(pr, step, hosts, handler);
  const out = new Map<string, Outcome>();
  const runOnce = effectiveKeywords(pr.play, step.chain, step.task).runOnce;
  await Promise.all(
    hosts.map(async (h) => {
      const s = own?.get(h) ?? step;
      if (runOnce) out.set(h, await runOnceFor(pr, s, h));
      else out.set(h, await pr.forks.run(() => (pr.state.interrupted ? notStarted(pr, s, h) : runTaskOnHost(pr, s, h))));
    }),
  );
  return out;
}

/** `name: "Pull {{ image }}"` shows rendered (with the first host's vars); the raw text if that fails. */
function displayName(pr: PlayRuntime, step: TaskStep, host: string | undefined): string {
  const raw = taskName(step.task);
  if (!raw.includes('{{') || host === undefined) return raw;
  try {
    const where = { pos: step.task.pos, task: raw, host, baseDir: step.task.baseDir };
    return renderText(raw, { ...where, vars: lazyVars(taskVars(pr, host, step.chain, step.task), where) });
  } catch {
    return raw;
  }
}

// A host still waiting for a fork when the operator interrupts does not start the task.
const notStarted = async (pr: PlayRuntime, step: TaskStep, host: string): Promise<Outcome> => {
  pr.state.leave(host, `interrupted before "${pr.names.get(step.key) ?? taskName(step.task)}"`);
  return { status: 'ok' };
};

async function runOnceFor(pr: PlayRuntime, step: TaskStep, host: string): Promise<Outcome> {
  let first = pr.runOnce.get(step.key) as Promise<{ host: string; outcome: Outcome }> | undefined;
  if (!first) {
    first = pr.forks.run(async () => ({ host, outcome: await runTaskOnHost(pr, step, host) }));
    pr.runOnce.set(step.key, first);
  }
  const r = await first;
  if (r.host === host) return r.outcome;
  // Everyone else shares the first host's result, as in Ansible.
  const reg = step.task.register;
  const src = pr.state.host(r.host);
  const dst = pr.state.host(host);
  if (reg && reg in src.facts) dst.facts[reg] = src.facts[reg];
  if (r.outcome.status !== 'failed') return r.outcome.status === 'ok' ? r.outcome : { status: 'ok' };
  // As in Ansible, a run_once task that fails fails every host it stood for.
  if (!step.rescuable) {
    dst.failed = true;
    dst.everFailed = true;
  }
  for (const k of ['tsbm_failed_task', 'tsbm_failed_result']) dst.facts[k] = src.facts[k];
  return { status: 'failed' };
}
