// Binds the inventory functions (src/inventory) to what validate needs: pattern syntax, host
// selection and the names of variables each host has.
import { dirname } from 'node:path';
import { TsbmError } from '../errors.js';
import { addPlaybookDirVars, loadInventories } from '../inventory/load.js';
import { selectHosts, validatePattern } from '../inventory/patterns.js';
import { inventoryVarsFor, magicVars } from '../inventory/vars.js';
import { simSpecOf } from '../sim/lab/auto.js';
import type { ValidateOptions } from './validate.js';

export async function inventoryChecks(
  inventories: string[],
  playbooks: string[],
  report: (e: TsbmError) => void,
): Promise<Pick<ValidateOptions, 'checkPattern' | 'inventory'>> {
  const checkPattern = (p: string) => validatePattern(p);
  // A `tsbm_sim` inventory only has hosts once its lab runs; validate connects to nothing, so
  // such inventories are checked for shape only and their hosts' variables are not known.
  const real: string[] = [];
  for (const p of inventories) {
    try {
      if (!simSpecOf(p)) real.push(p);
    } catch (e) {
      if (e instanceof TsbmError) report(e);
      else throw e;
    }
  }
  inventories = real;
  if (inventories.length === 0) return { checkPattern };
  let inv: ReturnType<typeof loadInventories>;
  try {
    inv = loadInventories(inventories);
    for (const d of new Set(playbooks.map((p) => dirname(p)))) addPlaybookDirVars(inv, d);
  } catch (e) {
    if (e instanceof TsbmError) {
      report(e);
      return { checkPattern };
    }
    throw e;
  }
  const loaded = inv;
  const names = new Map<string, Set<string>>();
  return {
    checkPattern,
    inventory: {
      select: (pattern) => {
        try {
          return selectHosts(loaded, pattern, { baseDir: playbooks[0] ? dirname(playbooks[0]) : '.' });
        } catch (e) {
          if (e instanceof TsbmError) return [];
          throw e;
        }
      },
      varNames: (host) => {
        let s = names.get(host);
        if (!s) {
          s = new Set([
            ...Object.keys(inventoryVarsFor(loaded, host)),
            ...Object.keys(magicVars(loaded, host)),
          ]);
          names.set(host, s);
        }
        return s;
      },
    },
  };
}
