// `tsbm run`'s checks before the first task: the playbook is loaded collecting every error, then
// checked as `tsbm validate` checks it (src/playbook/validate.ts), for what this run will do: the
// hosts each play targets after --limit and --shard, the tasks --tags and --start-at-task leave,
// and with --resume what each host still has to do. The run starts only when nothing is found;
// what was loaded here is what it runs.
import { TsbmError } from '../errors.js';
import { addPlaybookDirVars, loadInventories } from '../inventory/load.js';
import type { Inventory } from '../inventory/model.js';
import { loadPlaybook } from '../playbook/load.js';
import type { Play, Playbook, Task, TaskKeywords } from '../playbook/model.js';
import { type RunTarget, validateLoaded } from '../playbook/validate.js';
import { checkPattern, validateInventory } from '../playbook/validate-inventory.js';
import { effectiveKeywords } from './keywords.js';
import type { RunOptions } from './options.js';
import { inShard } from './shard.js';
import { tasksBefore } from './start-at.js';
import { shouldRun } from './tags.js';
import type { Vars } from '../types.js';

export interface Loaded {
  playbook: Playbook;
  inventory: Inventory;
  /** Each checked host's inventory variables, already computed (the executor reuses them). */
  hostVars: ReadonlyMap<string, Vars>;
}

export interface PreflightResult {
  /** Every problem found, in reading order; empty when the run may start. */
  errors: TsbmError[];
  /** The playbook and inventories, when both loaded (the run reuses them). */
  loaded?: Loaded;
  /** Loading (which a run needs anyway) and the checks, in ms: what the checks cost (bench/fleet). */
  timings: { loadMs: number; checksMs: number };
}

export interface PreflightOptions {
  /** --resume: true when the host completed the task in the resumed run (it will be skipped). */
  completed?: (host: string, taskId: string) => boolean;
}

export function preflightValidate(opts: RunOptions, pre: PreflightOptions = {}): PreflightResult {
  const started = performance.now();
  const timings = () => ({ loadMs: performance.now() - started, checksMs: 0 });
  const errors: TsbmError[] = [];
  let playbook: Playbook;
  try {
    playbook = loadPlaybook(opts.playbook, { onError: (e) => errors.push(e), ...(opts.rolesPath ? { rolesPath: opts.rolesPath } : {}) });
  } catch (e) {
    if (!(e instanceof TsbmError)) throw e;
    return { errors: [e], timings: timings() };
  }
  let inventory: Inventory;
  try {
    inventory = loadInventories(opts.inventories);
    addPlaybookDirVars(inventory, playbook.dir);
  } catch (e) {
    if (!(e instanceof TsbmError)) throw e;
    return { errors: [...errors, e], timings: timings() };
  }
  const loadMs = performance.now() - started;
  const hostVars = new Map<string, Vars>();
  const all = validateLoaded(playbook, errors, {
    inventory: validateInventory(inventory, playbook.dir, hostVars),
    checkPattern,
    extraVars: opts.extraVars,
    check: opts.check,
    target: runTarget(playbook, inventory, opts, pre),
  });
  return {
    errors: all,
    loaded: { playbook, inventory, hostVars },
    timings: { loadMs, checksMs: performance.now() - started - loadMs },
  };
}

/** What the run will do, as src/executor/play-runner.ts and walk-env.ts decide it. */
function runTarget(playbook: Playbook, inventory: Inventory, opts: RunOptions, pre: PreflightOptions): RunTarget {
  const view = validateInventory(inventory, playbook.dir);
  const limited = opts.limit === undefined ? undefined : new Set(view.select(opts.limit));
  // --start-at-task: plays before the one holding the task are skipped, and its earlier tasks.
  const skipped = new Map<Play, Set<Task> | 'all'>();
  if (opts.startAtTask !== undefined) {
    let found = false;
    for (const play of playbook.plays) {
      if (found) continue;
      const r = tasksBefore(play, opts.startAtTask);
      skipped.set(play, r.found ? r.skip : 'all');
      found = r.found;
    }
  }
  const completed = pre.completed;
  return {
    hosts: (_play, matched) =>
      matched.filter((h) => inShard(h, opts.shard) && (limited === undefined || limited.has(h))),
    selected: (play: Play, task: Task, chain: readonly TaskKeywords[]) => {
      const skip = skipped.get(play);
      if (skip === 'all' || skip?.has(task)) return false;
      return shouldRun(effectiveKeywords(play, chain, task).tags, opts);
    },
    ...(completed
      ? { done: (host: string, task: Task) => task.resume !== 'rerun' && completed(host, task.id) }
      : {}),
  };
}
