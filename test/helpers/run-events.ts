// Runs a playbook in-process as `tsbm run --output json` would, collecting every event: for tests
// that deploy against the simulated lab or a fake BMC and read the results per host and task.
import { runPlaybook } from '../../src/executor/run.js';
import type { RunOptions } from '../../src/executor/options.js';
import { EventBus, type TsbmEvent } from '../../src/output/events.js';
import { Redactor } from '../../src/output/redact.js';
import { baseOptions } from './executor-model.js';

export async function runEvents(o: Partial<RunOptions> & Pick<RunOptions, 'playbook' | 'inventories'>): Promise<{ code: number; events: TsbmEvent[] }> {
  const redactor = new Redactor();
  const bus = new EventBus(redactor);
  const events: TsbmEvent[] = [];
  bus.on((e) => events.push(e));
  const code = await runPlaybook(baseOptions({ forks: 5, output: 'json', verbosity: 1, ...o }), { bus, redactor });
  return { code, events };
}

export interface TaskResult {
  status: string;
  msg: string;
  result: Record<string, unknown>;
}

/** Each host's result of `task` (its last one), by host name. */
export function resultsOf(events: readonly TsbmEvent[], task: string): Record<string, TaskResult> {
  const out: Record<string, TaskResult> = {};
  for (const e of events) {
    if (e.type === 'host_result' && e.task === task) out[e.host] = { status: e.status, msg: e.msg ?? '', result: e.result as Record<string, unknown> };
  }
  return out;
}
