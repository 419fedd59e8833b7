// What the executor needs from its neighbours (inventory, loader, connections),
// gathered in one object so the engine can be driven by hand-built models in tests and by
// the real loaders in run.ts.
import type { ConnectionFactory, ConnectionSpec } from '../connection/types.js';
import type { SourcePos } from '../errors.js';
import type { ModuleDef } from '../modules/types.js';
import type { EventBus } from '../output/events.js';
import type { Redactor } from '../output/redact.js';
import type { RoleContext, TaskNode } from '../playbook/model.js';
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

export interface EngineDeps {
  bus: EventBus;
  redactor: Redactor;
  signal?: AbortSignal;
  connect: ConnectionFactory;
  /** An unpooled connection the caller closes (ModuleContext.connect); defaults to `connect`. */
  fresh?: ConnectionFactory;
  inventory: InventoryView;
  /** Module lookup (default: the registry). */
  modules?: (name: string) => ModuleDef | undefined;
  /** Loads an `include_tasks` file at run time (`role`: the including task's role). */
  loadTaskFile(file: string, from: SourcePos, role?: RoleContext): TaskNode[];
}
