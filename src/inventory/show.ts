// What `tsbm inventory` prints: Ansible-compatible --list JSON, the --graph tree and --host
// vars. Secret values are masked through the shared Redactor.
import { Redactor } from '../output/redact.js';
import type { Vars } from '../types.js';
import { assignVars } from '../util/merge-vars.js';
import type { Inventory } from './model.js';
import { inventoryVarsFor } from './vars.js';

interface ListGroup {
  hosts?: string[];
  children?: string[];
  vars?: Vars;
}

function masker(inv: Inventory): Redactor {
  const r = new Redactor();
  for (const g of inv.groups.values()) {
    r.addFromVars(g.vars);
    r.addFromVars(g.dirVars);
  }
  for (const h of inv.hosts.values()) {
    r.addFromVars(h.vars);
    r.addFromVars(h.dirVars);
  }
  return r;
}

const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A host's own vars (inventory file, then host_vars/), without its groups'. */
function ownVars(inv: Inventory, host: string): Vars {
  const h = inv.hosts.get(host)!;
  const out: Vars = {};
  assignVars(out, h.vars);
  assignVars(out, h.dirVars);
  return out;
}

/**
 * What `ansible-inventory --list` prints for the same inventory: `_meta.hostvars` with each
 * host's merged vars (hosts without any left out), then every group with its hosts and
 * children in inventory order (`ungrouped` first under `all`), empty groups left out. With
 * `exported` (its --export) hostvars hold only each host's own vars and groups carry theirs.
 */
export function inventoryList(inv: Inventory, exported = false): Record<string, unknown> {
  const hostvars: Record<string, Vars> = {};
  for (const h of inv.groups.get('all')!.hosts) {
    const vars = exported ? ownVars(inv, h) : inventoryVarsFor(inv, h);
    if (Object.keys(vars).length) hostvars[h] = vars;
  }
  const out: Record<string, unknown> = { _meta: { hostvars } };
  for (const g of inv.groups.values()) {
    const entry: ListGroup = {};
    if (g.hosts.length && g.name !== 'all') entry.hosts = [...g.hosts];
    if (g.children.length) entry.children = [...g.children];
    const vars: Vars = {};
    assignVars(vars, g.vars);
    assignVars(vars, g.dirVars);
    if (exported && Object.keys(vars).length) entry.vars = vars;
    if (Object.keys(entry).length) out[g.name] = entry;
  }
  return masker(inv).redactDeep(out);
}

/** `ansible-inventory --graph` tree, from a group (default all); optionally with vars. */
export function inventoryGraph(inv: Inventory, root = 'all', withVars = false): string {
  const lines: string[] = [];
  const mask = masker(inv);
  const varLines = (vars: Vars, indent: string): void => {
    for (const [k, v] of Object.entries(mask.redactDeep(vars)).sort(([a], [b]) => byName(a, b)))
      lines.push(`${indent}|--{${k} = ${typeof v === 'string' ? v : JSON.stringify(v)}}`);
  };
  const pad = (depth: number): string => (depth === 0 ? '' : `  ${'|  '.repeat(depth - 1)}|--`);
  const walk = (name: string, depth: number, seen: Set<string>): void => {
    const g = inv.groups.get(name);
    if (!g || seen.has(name)) return;
    lines.push(`${pad(depth)}@${name}:`);
    const next = new Set(seen).add(name);
    for (const c of [...g.children].sort(byName)) walk(c, depth + 1, next);
    // Under `all`, hosts show in their groups (or ungrouped), as ansible-inventory does.
    if (name !== 'all') {
      for (const h of [...g.hosts].sort(byName)) {
        lines.push(`${pad(depth + 1)}${h}`);
        const host = inv.hosts.get(h)!;
        if (withVars) varLines({ ...host.vars, ...host.dirVars }, `  ${'|  '.repeat(depth + 1)}`);
      }
    }
    if (withVars) varLines({ ...g.vars, ...g.dirVars }, `  ${'|  '.repeat(depth)}`);
  };
  walk(root, 0, new Set());
  return `${lines.join('\n')}\n`;
}

/** `--host NAME`: the host's merged inventory vars, masked. */
export function inventoryHost(inv: Inventory, host: string): Vars {
  return masker(inv).redactDeep(inventoryVarsFor(inv, host));
}
