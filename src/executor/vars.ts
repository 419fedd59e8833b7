// Variable composition per host per task. Precedence, low -> high (later layers replace
// earlier ones key by key, like Ansible's default hash_behaviour=replace; Ironic's node
// mappings driver_info, instance_info and properties merge one level deeper, util/merge-vars.ts):
//   role defaults < inventory vars < play vars < vars_files < role vars < block vars
//   (outer -> inner) < task vars < registered/set_fact < extra vars
// then the magic vars (inventory_hostname, groups, hostvars, playbook_dir, tsbm_check_mode),
// which nothing overrides.
import type { RoleContext, TaskKeywords } from '../playbook/model.js';
import type { Vars } from '../types.js';
import { assignVars } from '../util/merge-vars.js';

export interface VarLayers {
  roleDefaults?: Vars;
  inventory: Vars;
  play: Vars;
  varsFiles: Vars[];
  roleVars?: Vars;
  /** Block vars, outermost first. */
  blocks: Vars[];
  task: Vars;
  /** Registered results and set_fact values of this host. */
  facts: Vars;
  extra: Vars;
  magic: Vars;
}

export function composeVars(l: VarLayers): Vars {
  const out: Vars = {};
  if (l.roleDefaults) assignVars(out, l.roleDefaults);
  assignVars(out, l.inventory);
  assignVars(out, l.play);
  for (const f of l.varsFiles) assignVars(out, f);
  if (l.roleVars) assignVars(out, l.roleVars);
  for (const b of l.blocks) assignVars(out, b);
  assignVars(out, l.task);
  assignVars(out, l.facts);
  assignVars(out, l.extra);
  return Object.assign(out, l.magic);
}

/** The role a task belongs to: its own, else the innermost enclosing block's. */
export function roleOf(chain: readonly TaskKeywords[], task: TaskKeywords): RoleContext | undefined {
  if (task.role) return task.role;
  for (let i = chain.length - 1; i >= 0; i--) {
    const r = chain[i]!.role;
    if (r) return r;
  }
  return undefined;
}

export interface HostVarsSource {
  hosts(): string[];
  varsOf(host: string): Vars;
}

/**
 * `hostvars` as a lazy read-only view: a host's vars are computed when a template looks at
 * them (not cached: facts change during the play). Own-property traps make Handlebars
 * (prototype access off) see the keys.
 */
export function hostvarsView(src: HostVarsSource): Vars {
  const get = (h: string): Vars => src.varsOf(h);
  const known = (p: string | symbol): p is string => typeof p === 'string' && src.hosts().includes(p);
  return new Proxy({} as Vars, {
    get: (_t, p) => (known(p) ? get(p) : undefined),
    has: (_t, p) => known(p),
    ownKeys: () => src.hosts(),
    getOwnPropertyDescriptor: (_t, p) =>
      known(p) ? { value: get(p), enumerable: true, configurable: true, writable: false } : undefined,
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
}
