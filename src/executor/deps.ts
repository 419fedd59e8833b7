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
import type { HostEnd, NodeEnd } from '../output/host-outcome.js';
import type { Vars } from '../types.js';
import type { Registered } from './result.js';

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
  beforeTask?(host: string, taskId: string, step: { changesNode: boolean }): Promise<void>;
  /**
   * Aborted when this run no longer holds the host's node (its lock lost or taken, the node
   * store gone): the host's running task stops and fails with the signal's reason, a NodeNotHeld
   * (src/executor/task-status.ts). Undefined: nothing can take the node away.
   */
  nodeLost?(host: string): AbortSignal | undefined;
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
  /** --resume: the run this one continues (named in the `resume` event). */
  resumedFrom?: string;
  /** --resume: the host failed in the resumed run and stays failed (not run); its failure. */
  staysFailed?(host: string): string | undefined;
  /** --resume: the host starts again from the start (nothing it had done counts). */
  restarts?(host: string): boolean;
  /**
   * A play that declares `provision:` is about to start on these hosts (their locks held): the
   * run's decision for each (refused: the host fails with that message before any task, nothing
   * touched), and what the play's tasks see of its node record (`tsbm_node`).
   */
  admit?(play: ProvisionPlay, hosts: readonly NodeFacts[]): Promise<ReadonlyMap<string, Admission>>;
  /**
   * After the last play, before the recap (services still open): the run ends its nodes as it
   * must (those that did not finish end safe) and says how it left each (on the recap).
   */
  settle?(api: SettleApi): Promise<Record<string, NodeEnd>>;
}

export interface ProvisionPlay {
  name: string;
  provision: 'deploy' | 'undeploy';
  /** The run targets only part of the play (--tags, --skip-tags, --start-at-task): a deploy that ends ok is not known whole. */
  partial: boolean;
  check: boolean;
}

/** What the play's variables say about one host's node, read before any task runs. */
export interface NodeFacts {
  host: string;
  /** The node lock's key (journal/node-key.ts). */
  key: string;
  /** driver_info.redfish_system_id, when the inventory names the System. */
  system?: string;
  /** `protected: true` in the host's variables (as Ironic's node field), and protected_reason. */
  protected: boolean;
  protectedReason?: string;
  /**
   * `provision_state` in the host's variables (Ironic's field, as `tsbm inventory import
   * --from-ironic` carries it): what the node is when tsbm has no record of it yet.
   */
  declaredState?: string;
  /** `rebuild: true` in the host's variables, or --rebuild. */
  rebuild: boolean;
  /** What a deploy installs: instance_info.image_source, else the ISO the node boots as its instance. */
  image?: string;
  /** on_deploy_failure (power_off | leave). */
  onFailure: string;
}

export interface Admission {
  refused?: string;
  /** `tsbm_node` for the play's tasks: the record as the run found it. */
  node?: Vars;
}

export interface SettleApi {
  /** How each host ended (the recap's outcomes). */
  ends: Readonly<Record<string, HostEnd>>;
  /** The facts read for a host in its last play (admitted or not). */
  facts(host: string): NodeFacts | undefined;
  /** Runs one module as a task of the host's last play (events and journal as any task; its failure is ignored). */
  run(host: string, step: { module: string; name: string; id: string; args?: Vars }): Promise<Registered>;
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
