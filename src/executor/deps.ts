// What the executor needs from its neighbours (inventory, loader, connections),
// gathered in one object so the engine can be driven by hand-built models in tests and by
// the real loaders in run.ts.
import type { ConnectionFactory, ConnectionSpec } from '../connection/types.js';
import type { SourcePos } from '../errors.js';
import type { LockTarget } from '../journal/node-key.js';
import type { ModuleDef } from '../module-api/types.js';
import type { EventBus } from '../output/events.js';
import type { Redactor } from '../output/redact.js';
import type { Handler, IncludeRoleSpec, RoleContext, TaskNode } from '../playbook/model.js';
import type { Vars } from '../types.js';

/** The inventory as the executor sees it, already bound to one loaded Inventory. */
export interface InventoryView {
  /** Every host name (for hostvars and delegate_to checks). */
  names(): string[];
  /** Host names matching a pattern, in inventory order. */
  select(pattern: string): string[];
  /** Inventory-level vars of a host (group vars ... host_vars, already ordered). */
  varsFor(host: string): Vars;
  /** inventory_hostname, group_names, groups, ... */
  magicFor(host: string): Vars;
  connectionSpec(host: string, vars: Vars): ConnectionSpec;
}

/** Hooks for the run journal and --resume (src/journal); all optional. */
export interface RunHooks {
  /**
   * Awaited before a task starts on a host (the journal's durability barrier). A rejection
   * stops the run before any unrecorded remote work: no new tasks, exit code of the error.
   */
  beforeTask?(host: string, taskId: string): Promise<void>;
  /**
   * Awaited when a play starts, with the hosts it targets and the machine each one is
   * (src/executor/node-identity.ts), for the node locks; a rejection stops the run.
   */
  beforePlay?(hosts: LockTarget[]): Promise<void>;
  /** --resume: registered variables and facts to restore for a host when it first appears. */
  restore?(host: string): Vars | undefined;
  /**
   * --resume: true when this host completed the task ok in the resumed run; the task is then
   * skipped (its registered value comes back through `restore`) unless it says `resume: rerun`.
   */
  completed?(host: string, taskId: string): boolean;
}

export interface EngineDeps {
  bus: EventBus;
  redactor: Redactor;
  signal?: AbortSignal;
  connect: ConnectionFactory;
  /** An unpooled connection the caller closes (ModuleContext.connect); defaults to `connect`. */
  fresh?: ConnectionFactory;
  inventory: InventoryView;
  hooks?: RunHooks;
  /** Run id for run_start (the journal names its file after it); random when absent. */
  runId?: string;
  /** Module lookup (default: the registry). */
  modules?: (name: string) => ModuleDef | undefined;
  /** Loads an `include_tasks` file at run time (`role`: the including task's role). */
  loadTaskFile(file: string, from: SourcePos, role?: RoleContext): TaskNode[];
  /** Loads a role at run time (`include_role` with a templated name, already rendered). */
  loadRole?(name: string, spec: Omit<IncludeRoleSpec, 'name'>, from: SourcePos): { nodes: TaskNode[]; handlers: Handler[] };
}
