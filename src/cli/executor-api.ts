// What `tsbm run` calls in the executor (src/executor/run.ts). Loaded lazily by a computed
// specifier so the CLI builds and reports cleanly even without the executor compiled in.
import { TsbmError } from '../errors.js';
import type { RunOptions } from '../executor/options.js';
import type { EventBus } from '../output/events.js';
import type { Redactor } from '../output/redact.js';

export interface ExecutorApi {
  runPlaybook(opts: RunOptions, deps: { bus: EventBus; redactor: Redactor; signal?: AbortSignal }): Promise<number>;
  listPlaybook(opts: RunOptions): Promise<string>;
}

export async function loadExecutor(): Promise<ExecutorApi> {
  const spec = '../executor/run.js';
  try {
    const mod = (await import(spec)) as Partial<ExecutorApi>;
    if (typeof mod.runPlaybook !== 'function' || typeof mod.listPlaybook !== 'function') {
      throw new Error('runPlaybook/listPlaybook missing');
    }
    return mod as ExecutorApi;
  } catch (e) {
    throw new TsbmError('runtime', `this tsbm build has no playbook executor (${(e as Error).message})`, {
      hint: 'rebuild tsbm (npm run build)',
    });
  }
}
