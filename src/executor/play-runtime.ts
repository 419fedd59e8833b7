// Everything a task needs to know about the run and play it belongs to.
import type { EventBus } from '../output/events.js';
import type { Redactor } from '../output/redact.js';
import type { Play, TaskNode } from '../playbook/model.js';
import type { Vars } from '../types.js';
import type { ConnectionPool } from './connection-pool.js';
import type { EngineDeps, InventoryView, NodeFacts } from './deps.js';
import type { RunState } from './run-state.js';
import type { Semaphore } from '../util/semaphore.js';
import type { RunServicesImpl } from './services.js';

export interface RunRuntime {
  deps: EngineDeps;
  bus: EventBus;
  redactor: Redactor;
  inventory: InventoryView;
  state: RunState;
  services: RunServicesImpl;
  pool: ConnectionPool;
  forks: Semaphore;
  check: boolean;
  diff: boolean;
  /** --rebuild: active nodes may be deployed again (protected ones still may not). */
  rebuild: boolean;
  /** --tags, --skip-tags or --start-at-task: the run does part of each play. */
  partial: boolean;
  /** --force-handlers (a play's force_handlers wins). */
  forceHandlers: boolean;
  verbosity: number;
  extraVars: Vars;
  tags: string[];
  skipTags: string[];
  playbookDir: string;
  /** Aborts running tasks (fires a grace period after an interrupt). */
  taskAbort: AbortSignal;
  /** Fires at the interrupt itself: waits and pauses end at once (tasks that change nodes get the grace period). */
  interrupt: AbortSignal;
  untilDelayMs?: number;
  /** Vars objects already scanned for secret-named values. */
  scanned: WeakSet<object>;
  /** Memoized inventory vars per host. */
  invVars: Map<string, Vars>;
  /** Each host's node as its last play's variables describe it (the node record's facts). */
  nodeFacts: Map<string, NodeFacts>;
  /** Each host's last play, for the steps the run takes on it after the plays (settle). */
  lastPlay: Map<string, PlayRuntime>;
}

export interface PlayRuntime extends RunRuntime {
  play: Play;
  /** Hosts of the play (after --limit), for ansible_play_hosts. */
  playHosts: string[];
  /** meta: end_play. */
  endPlay: boolean;
  /** Tasks before --start-at-task, skipped in this play. */
  skipTasks: Set<object>;
  /** run_once results by step key, for the current serial batch. */
  runOnce: Map<string, Promise<unknown>>;
  /** task_start already emitted, by step key. */
  started: Set<string>;
  /** Magic vars per host for this play. */
  magic: Map<string, Vars>;
  /** include_tasks files loaded in this play, by include id and file. */
  includes: Map<string, TaskNode[]>;
  /** Display names (templated once per step), by step key. */
  names: Map<string, string>;
}
