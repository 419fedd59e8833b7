// Binds the inventory functions to one loaded Inventory for the executor.
import { connectionSpecFor } from '../inventory/connection-vars.js';
import type { Inventory } from '../inventory/model.js';
import { selectHosts } from '../inventory/patterns.js';
import { inventoryVarsFor, magicVars } from '../inventory/vars.js';
import type { Vars } from '../types.js';
import type { InventoryView } from './deps.js';

/** `known`: hosts' inventory variables computed already (by tsbm run's checks). */
export function inventoryView(inv: Inventory, baseDir: string, known?: ReadonlyMap<string, Vars>): InventoryView {
  return {
    names: () => [...inv.hosts.keys()],
    select: (pattern) => selectHosts(inv, pattern, { baseDir }),
    varsFor: (host) => known?.get(host) ?? inventoryVarsFor(inv, host),
    magicFor: (host) => magicVars(inv, host),
    connectionSpec: (host, vars) => connectionSpecFor(host, vars),
  };
}
