// Entry points for `tsbm run`: load the playbook and inventories, wire the real connection
// factory, run. Parse errors are thrown as TsbmError (the CLI prints them, exit 4).
import { connectionFactory } from '../connection/factory.js';
import type { ConnectionFactory } from '../connection/types.js';
import { addPlaybookDirVars, loadInventories } from '../inventory/load.js';
import type { EventBus } from '../output/events.js';
import type { Redactor } from '../output/redact.js';
import { loadIncludedRole, loadPlaybook, loadTasksFile } from '../playbook/load.js';
import type { RunHooks } from './deps.js';
import { executePlaybook } from './engine.js';
import { inventoryView } from './inventory-view.js';
import type { ExecutorTuning, RunOptions } from './options.js';
import type { Loaded } from './preflight-validate.js';

export { listPlaybook } from './list.js';

export interface RunDeps {
  bus: EventBus;
  redactor: Redactor;
  signal?: AbortSignal;
  /** Connection factory (tests pass fakes or point at in-process SSH servers). */
  connect?: ConnectionFactory;
  /** Connections for ModuleContext.connect, which the module closes (default: `connect`). */
  fresh?: ConnectionFactory;
  tuning?: ExecutorTuning;
  /** Journal / --resume hooks. */
  hooks?: RunHooks;
  /** Run id for run_start (the journal's file name); random when absent. */
  runId?: string;
}

/** `loaded`: the playbook and inventories tsbm run's checks already loaded (src/executor/preflight-validate.ts). */
export async function runPlaybook(opts: RunOptions, deps: RunDeps, loaded?: Loaded): Promise<number> {
  const load = opts.rolesPath ? { rolesPath: opts.rolesPath } : {};
  const playbook = loaded?.playbook ?? loadPlaybook(opts.playbook, load);
  let inv = loaded?.inventory;
  if (!inv) {
    inv = loadInventories(opts.inventories);
    addPlaybookDirVars(inv, playbook.dir);
  }
  const connect =
    deps.connect ?? connectionFactory({ onWarning: (message) => deps.bus.emit({ type: 'warning', time: Date.now(), message }) });
  // The engine's pool owns what `connect` opens and closes it at the end of the run.
  return executePlaybook(
    playbook,
    opts,
    {
      bus: deps.bus,
      redactor: deps.redactor,
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(deps.hooks ? { hooks: deps.hooks } : {}),
      ...(deps.runId ? { runId: deps.runId } : {}),
      connect,
      fresh: deps.fresh ?? connect,
      inventory: inventoryView(inv, playbook.dir, loaded?.hostVars),
      loadTaskFile: (file, from, role) => loadTasksFile(file, from, playbook.dir, role, load),
      loadRole: (name, spec, from) => loadIncludedRole(name, spec, from, playbook.dir, load),
    },
    deps.tuning,
  );
}
