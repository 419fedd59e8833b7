// Binds a loaded inventory (src/inventory) to what validate needs: host selection, each host's
// inventory and magic variables (which templates are checked against), and pattern syntax.
import { TsbmError } from '../errors.js';
import type { Inventory } from '../inventory/model.js';
import { selectHosts, validatePattern } from '../inventory/patterns.js';
import { inventoryVarsFor, magicVars } from '../inventory/vars.js';
import type { Vars } from '../types.js';
import type { ValidateInventory } from './validate.js';

export const checkPattern = (p: string): TsbmError | undefined => validatePattern(p);

/**
 * `baseDir`: where `@file` host patterns resolve (the playbook's directory). `cache`: each host's
 * inventory variables, kept (tsbm run hands them on to the executor instead of computing them again).
 */
export function validateInventory(inv: Inventory, baseDir: string, cache?: Map<string, Vars>): ValidateInventory {
  return {
    select: (pattern) => {
      try {
        return selectHosts(inv, pattern, { baseDir });
      } catch (e) {
        if (e instanceof TsbmError) return []; // a bad pattern is reported by checkPattern
        throw e;
      }
    },
    hosts: () => [...inv.hosts.keys()],
    vars: (host) => {
      let v = cache?.get(host);
      if (!v) {
        v = inventoryVarsFor(inv, host);
        cache?.set(host, v);
      }
      return v;
    },
    magic: (host) => magicVars(inv, host),
  };
}
