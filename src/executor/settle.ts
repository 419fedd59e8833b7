// After the last play, before the recap: the run (its settle hook, src/run/) ends the nodes it
// must end (those that did not finish end safe) and records how it left each. What it runs on a
// host is a task of that host's last play, so it reaches the BMC through the run's pool and shows
// in every output and the journal like any task; its failure never changes the host's outcome
// (it is ignored: the node's record says what could not be done).
import { TsbmError } from '../errors.js';
import type { NodeEnd } from '../output/host-outcome.js';
import type { Task } from '../playbook/model.js';
import type { SettleApi } from './deps.js';
import type { PlayRuntime, RunRuntime } from './play-runtime.js';
import { failedResult, type Registered } from './result.js';
import { runTaskOnHost } from './task-runner.js';

const REGISTER = 'tsbm_settle_result';

export async function settleNodes(rt: RunRuntime): Promise<Record<string, NodeEnd>> {
  const settle = rt.deps.hooks?.settle;
  if (!settle) return {};
  // The run's own signals may have fired (Ctrl-C): these steps get a signal of their own; a
  // second Ctrl-C still ends the process at once.
  const fresh = new AbortController();
  const announced = new Set<string>();
  const api: SettleApi = {
    ends: rt.state.ends(),
    facts: (h) => rt.nodeFacts.get(h),
    run: (host, step) => runStep(rt, fresh.signal, announced, host, step),
  };
  try {
    return await settle(api);
  } catch (e) {
    rt.bus.emit({ type: 'warning', time: Date.now(), message: `could not settle the nodes: ${e instanceof TsbmError ? e.oneLine() : String(e)}` });
    return {};
  }
}

async function runStep(
  rt: RunRuntime,
  signal: AbortSignal,
  announced: Set<string>,
  host: string,
  step: Parameters<SettleApi['run']>[1],
): Promise<Registered> {
  const base = rt.lastPlay.get(host);
  if (!base) return failedResult(`no play of this run reached ${host}`);
  const pr: PlayRuntime = { ...base, taskAbort: signal, interrupt: signal, started: new Set(), names: new Map() };
  const task: Task = {
    kind: 'task',
    id: step.id,
    name: step.name,
    module: step.module,
    args: step.args ?? {},
    argsPos: base.play.pos,
    pos: base.play.pos,
    keyPos: {},
    when: [],
    tags: ['always'],
    vars: {},
    notify: [],
    baseDir: base.play.baseDir,
    register: REGISTER,
    ignoreErrors: true,
  };
  if (!announced.has(step.id)) {
    announced.add(step.id);
    rt.bus.emit({ type: 'task_start', time: Date.now(), play: base.play.name, task: step.name, taskId: step.id, module: step.module });
  }
  await runTaskOnHost(pr, { kind: 'task', task, chain: [], path: [], key: step.id, rescuable: false }, host);
  const facts = rt.state.host(host).facts;
  const reg = facts[REGISTER] as Registered | undefined;
  delete facts[REGISTER];
  return reg ?? failedResult('no result');
}
