// How one layer of variables goes over another. Ansible replaces a variable whole (its default
// hash_behaviour=replace), and so does tsbm, with one deliberate difference: Ironic's node
// mappings merge key by key, as Ironic's own fields do when a node is patched. Credentials can
// then live once in group_vars/all while each host gives only its BMC address.
import type { Vars } from '../types.js';
import { setOwn } from './own-property.js';

/** Variables that merge key by key across layers (one level deep; anything else replaces). */
export const MERGED_MAPPINGS: ReadonlySet<string> = new Set(['driver_info', 'instance_info', 'properties']);

const isPlainMap = (v: unknown): v is Vars =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/**
 * Puts `layer` over `out` (in place, like Object.assign): a node mapping given in both as a
 * mapping merges, the layer's keys winning; every other variable is replaced. Nested values are
 * never mutated (a merged mapping is a new object).
 */
export function assignVars(out: Vars, layer: Vars): Vars {
  for (const k of Object.keys(layer)) {
    const v = layer[k];
    const old = MERGED_MAPPINGS.has(k) ? out[k] : undefined;
    setOwn(out, k, old !== undefined && isPlainMap(old) && isPlainMap(v) ? { ...old, ...v } : v);
  }
  return out;
}
