// Inventory variables of one host, in Ansible's precedence (low -> high):
//   inventory-file group vars (all first, parents before children, siblings by name)
//   < group_vars/all < group_vars/<group> (same order) < inventory-file host vars < host_vars/<host>
// Top-level keys replace (Ansible's hash_behaviour=replace), except Ironic's node mappings
// (driver_info, instance_info, properties), which merge key by key (util/merge-vars.ts).
import { TsbmError } from '../errors.js';
import type { Vars } from '../types.js';
import { groupsInPrecedenceOrder } from './build.js';
import { ensureImplicitLocalhost } from './load.js';
import type { Inventory, InventoryHost } from './model.js';
import { didYouMean } from '../schema/did-you-mean.js';
import { assignVars } from '../util/merge-vars.js';
import { asData } from '../util/unsafe-text.js';

function hostOrThrow(inv: Inventory, host: string): InventoryHost {
  ensureImplicitLocalhost(inv, host);
  const h = inv.hosts.get(host);
  if (h) return h;
  const near = didYouMean(host, inv.hosts.keys());
  throw new TsbmError('options', `host "${host}" is not in the inventory`, {
    host,
    hint: near ? `did you mean "${near}"?` : 'check the name against `tsbm inventory --graph`',
  });
}

export function inventoryVarsFor(inv: Inventory, host: string): Vars {
  const h = hostOrThrow(inv, host);
  const groups = groupsInPrecedenceOrder(inv, h.groups)
    .map((g) => inv.groups.get(g))
    .filter((g) => g !== undefined);
  const out: Vars = {};
  for (const g of groups) assignVars(out, g.vars);
  for (const g of groups) assignVars(out, g.dirVars);
  assignVars(out, h.vars);
  assignVars(out, h.dirVars);
  return out;
}

/** Every host of a group, through its children, in inventory order. */
export function hostsOfGroup(inv: Inventory, group: string): string[] {
  const seen = new Set<string>();
  const members = new Set<string>();
  const walk = (name: string): void => {
    if (seen.has(name)) return;
    seen.add(name);
    const g = inv.groups.get(name);
    if (!g) return;
    for (const h of g.hosts) members.add(h);
    for (const c of g.children) walk(c);
  };
  walk(group);
  return [...inv.hosts.keys()].filter((h) => members.has(h));
}

const groupsCache = new WeakMap<Inventory, { key: string; groups: Record<string, string[]> }>();

/** `groups` magic var: group name -> host list (cached until the inventory's size changes). */
function groupsMap(inv: Inventory): Record<string, string[]> {
  const key = `${inv.hosts.size}/${inv.groups.size}`;
  const hit = groupsCache.get(inv);
  if (hit && hit.key === key) return hit.groups;
  const groups: Record<string, string[]> = {};
  for (const name of inv.groups.keys()) groups[name] = hostsOfGroup(inv, name);
  groupsCache.set(inv, { key, groups });
  return groups;
}

/** Whether any host or group name holds `{{` (cached by the inventory's size, as groupsMap is). */
const templatedNames = new WeakMap<Inventory, { key: string; any: boolean }>();
function namesHoldTemplates(inv: Inventory): boolean {
  const key = `${inv.hosts.size}/${inv.groups.size}`;
  const hit = templatedNames.get(inv);
  if (hit && hit.key === key) return hit.any;
  const any = [...inv.hosts.keys(), ...inv.groups.keys()].some((n) => n.includes('{{'));
  templatedNames.set(inv, { key, any });
  return any;
}

export function magicVars(inv: Inventory, host: string): Vars {
  const h = hostOrThrow(inv, host);
  const magic: Vars = {
    inventory_hostname: h.name,
    inventory_hostname_short: h.name.split('.')[0],
    group_names: h.groups.filter((g) => g !== 'all' && g !== 'ungrouped').sort(),
    groups: groupsMap(inv),
  };
  // Names are data: one that holds `{{` reaches templates as the text it is, never rendered.
  return namesHoldTemplates(inv) ? asData(magic) : magic;
}
