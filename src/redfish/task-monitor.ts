// Follows a 202 Accepted to completion: polls the task monitor (Location header), honouring
// Retry-After, until it stops answering 202 or the bounded wait runs out.
import { sleep } from '../util/wait.js';
import type { RedfishResponse } from './transport.js';

export interface TaskMonitorIo {
  get(url: string): Promise<RedfishResponse>;
  signal?: AbortSignal;
  onProgress?: (message: string) => void;
}

export class TaskMonitorTimeout extends Error {
  constructor(
    readonly monitor: string,
    readonly elapsedMs: number,
  ) {
    super(`task monitor ${monitor} still running after ${Math.round(elapsedMs / 1000)}s`);
  }
}

const FAILED_STATES = new Set(['Exception', 'Killed', 'Cancelled', 'Interrupted']);

/** Returns the final response; a task that ends in Exception/Killed is returned as status 500. */
export async function followTask(io: TaskMonitorIo, monitor: string, timeoutMs: number, maxDelayMs = 5000): Promise<RedfishResponse> {
  const start = Date.now();
  for (;;) {
    const res = await io.get(monitor);
    if (res.status !== 202) {
      const state = res.body?.TaskState;
      if (typeof state === 'string' && FAILED_STATES.has(state)) return { ...res, status: 500 };
      return res;
    }
    const elapsed = Date.now() - start;
    const pct = res.body?.PercentComplete;
    io.onProgress?.(`task ${monitor} running${typeof pct === 'number' ? ` (${pct}%)` : ''}`);
    const ra = Number(res.headers['retry-after']);
    const delay = Math.min(maxDelayMs, Number.isFinite(ra) && ra > 0 ? ra * 1000 : 1000);
    if (elapsed + delay > timeoutMs) throw new TaskMonitorTimeout(monitor, elapsed);
    await sleep(Math.max(delay, 50), io.signal);
  }
}
