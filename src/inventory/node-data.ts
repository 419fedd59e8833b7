// Reads a node's Ironic-named fields (instance_info.*, properties.*) out of host vars.
import type { Vars } from '../types.js';

/** `getPath(vars, 'instance_info.image_source')`; undefined when any step is missing. */
export function getPath(vars: Vars, path: string): unknown {
  let cur: unknown = vars;
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/** The first of an explicit argument and the given var paths that is set (not undefined/null/''). */
export function firstSet(explicit: unknown, vars: Vars, ...paths: string[]): unknown {
  if (explicit !== undefined && explicit !== null && explicit !== '') return explicit;
  for (const p of paths) {
    const v = getPath(vars, p);
    if (v !== undefined && v !== null && v !== '') return v;
  }
  return undefined;
}

/** Ironic's booleans arrive as strings from some inventories ("true", "False"). */
export function truthy(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return ['1', 'true', 'yes', 'on', 'y', 't'].includes(v.trim().toLowerCase());
  return false;
}
