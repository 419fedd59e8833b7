import type { SourcePos } from '../errors.js';
import type { Vars } from '../types.js';

export interface InventoryGroup {
  name: string;
  /** Vars set in inventory files (not group_vars/ folders). */
  vars: Vars;
  /** Vars from group_vars/<name> folders beside the inventory or playbook. */
  dirVars: Vars;
  children: string[];
  hosts: string[];
  pos?: SourcePos;
}

export interface InventoryHost {
  name: string;
  /** Vars set on the host in inventory files. */
  vars: Vars;
  /** Vars from host_vars/<name>. */
  dirVars: Vars;
  /** Every group the host is in, directly or through parents, `all` included. */
  groups: string[];
  pos?: SourcePos;
}

export interface Inventory {
  hosts: Map<string, InventoryHost>;
  groups: Map<string, InventoryGroup>;
  /** Inventory files, in the order given. */
  sources: string[];
}
