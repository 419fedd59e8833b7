// What `tsbm inventory` prints: Ansible-compatible --list JSON, the --graph tree and --host
// vars. Secret values are masked through the shared Redactor.
import { Redactor } from '../output/redact.js';
import type { Vars } from '../types.js';
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

/** `ansible-inventory --list` shape: `_meta.hostvars` with merged vars, then one entry per group. */
export function inventoryList(inv: Inventory): Record<string, unknown> {
  const hostvars: Record<string, Vars> = {};
  for (const h of inv.groups.get('all')!.hosts) hostvars[h] = inventoryVarsFor(inv, h);
  const out: Record<string, unknown> = { _meta: { hostvars } };
  for (const g of inv.groups.values()) {
    const entry: ListGroup = {};
    if (g.hosts.length && g.name !== 'all') entry.hosts = [...g.hosts];
    if (g.children.length) entry.children = [...g.children].sort(byName);
    const vars = { ...g.vars, ...g.dirVars };
    if (Object.keys(vars).length) entry.vars = vars;
    if (g.name === 'ungrouped' && !entry.hosts) continue;
    out[g.name] = entry;
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
