// Building and finishing an Inventory: groups and hosts created on first mention, `all` and
// `ungrouped` implicit, parent links resolved once every file is read.
import { parseError, type SourcePos } from '../errors.js';
import { hostNameProblem } from './host-name.js';
import type { Inventory, InventoryGroup, InventoryHost } from './model.js';

export function emptyInventory(): Inventory {
  const inv: Inventory = { hosts: new Map(), groups: new Map(), sources: [] };
  // `ungrouped` is the first child of `all`, as in Ansible (its listings keep this order).
  addChild(ensureGroup(inv, 'all'), 'ungrouped');
  ensureGroup(inv, 'ungrouped');
  return inv;
}

export function ensureGroup(inv: Inventory, name: string, pos?: SourcePos): InventoryGroup {
  let g = inv.groups.get(name);
  if (!g) {
    g = { name, vars: {}, dirVars: {}, children: [], hosts: [], ...(pos ? { pos } : {}) };
    inv.groups.set(name, g);
  } else if (!g.pos && pos) g.pos = pos;
  return g;
}

export function ensureHost(inv: Inventory, name: string, pos?: SourcePos): InventoryHost {
  let h = inv.hosts.get(name);
  if (!h) {
    const bad = hostNameProblem(name);
    if (bad) throw parseError(`host ${JSON.stringify(name)}: ${bad}`, pos, 'give the host a name of letters, digits, dots and dashes (put odd characters in a variable instead)');
    h = { name, vars: {}, dirVars: {}, groups: [], ...(pos ? { pos } : {}) };
    inv.hosts.set(name, h);
  }
  return h;
}

const pushUnique = (list: string[], item: string): void => {
  if (!list.includes(item)) list.push(item);
};

export function addChild(parent: InventoryGroup, child: string): void {
  pushUnique(parent.children, child);
}

export function addHostToGroup(group: InventoryGroup, host: string): void {
  pushUnique(group.hosts, host);
}

/** Parents of every group (from children lists). */
function parentsOf(inv: Inventory): Map<string, string[]> {
  const parents = new Map<string, string[]>();
  for (const g of inv.groups.values())
    for (const c of g.children) pushUnique(parents.get(c) ?? parents.set(c, []).get(c)!, g.name);
  return parents;
}

/**
 * Link orphan groups under `all`, reject cycles, fill `ungrouped`, `all.hosts` and every
 * host's `groups` (direct and inherited, `all` included). Safe to call again after merging.
 */
export function finishInventory(inv: Inventory): void {
  const all = inv.groups.get('all')!;
  all.children = all.children.filter((c) => c !== 'all');
  let parents = parentsOf(inv);
  for (const g of inv.groups.values()) if (g.name !== 'all' && !parents.has(g.name)) addChild(all, g.name);
  addChild(all, 'ungrouped');
  parents = parentsOf(inv);

  // Cycle check: a group may not be its own ancestor.
  const state = new Map<string, 1 | 2>();
  const visit = (name: string, trail: string[]): void => {
    const s = state.get(name);
    if (s === 2) return;
    if (s === 1) {
      const g = inv.groups.get(name);
      throw parseError(
        `group "${name}" is its own ancestor: ${[...trail.slice(trail.indexOf(name)), name].join(' -> ')}`,
        g?.pos,
        'remove one of the children: entries that close the loop',
      );
    }
    state.set(name, 1);
    for (const c of inv.groups.get(name)?.children ?? []) visit(c, [...trail, name]);
    state.set(name, 2);
  };
  for (const name of inv.groups.keys()) visit(name, []);

  const ancestors = (name: string, out: Set<string>): void => {
    if (out.has(name)) return;
    out.add(name);
    for (const p of parents.get(name) ?? []) ancestors(p, out);
  };
  const direct = new Map<string, string[]>();
  for (const g of inv.groups.values())
    for (const h of g.hosts) pushUnique(direct.get(h) ?? direct.set(h, []).get(h)!, g.name);

  // `ungrouped` keeps the hosts listed in it that are in no other group, in their order, then
  // takes the other hosts without a group in inventory order (Ansible's order).
  const ungrouped = inv.groups.get('ungrouped')!;
  const listed = ungrouped.hosts;
  const lonely: string[] = [];
  for (const host of inv.hosts.values()) {
    const own = (direct.get(host.name) ?? []).filter((g) => g !== 'all' && g !== 'ungrouped');
    if (own.length === 0) {
      own.push('ungrouped');
      lonely.push(host.name);
    }
    const set = new Set<string>();
    for (const g of own) ancestors(g, set);
    set.add('all');
    host.groups = groupsInPrecedenceOrder(inv, [...set], parents);
  }
  const isLonely = new Set(lonely);
  ungrouped.hosts = [...new Set([...listed.filter((h) => isLonely.has(h)), ...lonely])];
  all.hosts = [...inv.hosts.keys()];
}

/** Depth of each group below `all` (longest path), the first key of Ansible's group order. */
function depthOf(name: string, parents: Map<string, string[]>, memo: Map<string, number>): number {
  if (name === 'all') return 0;
  const hit = memo.get(name);
  if (hit !== undefined) return hit;
  memo.set(name, 1); // guards against cycles (rejected elsewhere)
  const ps = parents.get(name) ?? ['all'];
  const d = 1 + Math.max(...ps.map((p) => depthOf(p, parents, memo)));
  memo.set(name, d);
  return d;
}

/** `all` first, parents before children (by depth), siblings by name: Ansible's order. */
export function groupsInPrecedenceOrder(
  inv: Inventory,
  groups: string[],
  parents = parentsOf(inv),
): string[] {
  const memo = new Map<string, number>();
  return [...groups].sort(
    (a, b) => depthOf(a, parents, memo) - depthOf(b, parents, memo) || (a < b ? -1 : a > b ? 1 : 0),
  );
}
