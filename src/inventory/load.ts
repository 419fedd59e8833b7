// Entry points for inventories: read every -i path (YAML or INI files, executable inventory
// scripts, or directories of them), merge them, and apply group_vars/ and host_vars/ from beside each
// inventory and beside the playbook.
import { readdirSync, statSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { parseError } from '../errors.js';
import type { Vars } from '../types.js';
import { emptyInventory, ensureHost, finishInventory } from './build.js';
import { type DirVars, loadDirVars } from './dir-vars.js';
import type { Inventory } from './model.js';
import { parseInventoryFile } from './parse-file.js';
import { isInventoryScript, isNonExecutableScript, parseInventoryScript } from './script.js';

/** host_vars for hosts not (yet) in the inventory, e.g. an implicit localhost. */
const pendingHostVars = new WeakMap<Inventory, Map<string, Vars>>();

export const IMPLICIT_LOCALHOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '::1']);

/**
 * Inventory files in a directory, in name order: YAML files, inventory scripts and, as
 * ansible-inventory reads them, files without an extension (`hosts` in INI or YAML). Like
 * Ansible, a directory's *.ini files are not read (name the file on -i to use it).
 */
function inventoryFilesIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => !f.startsWith('.') && !f.endsWith('~'))
    .sort()
    .map((f) => join(dir, f))
    .filter((p) => (['.yml', '.yaml', ''].includes(extname(p)) && statSync(p).isFile()) || isInventoryScript(p));
}

function applyDirVars(inv: Inventory, dv: DirVars): void {
  for (const [name, vars] of dv.groups) {
    const g = inv.groups.get(name);
    if (g) g.dirVars = { ...g.dirVars, ...vars };
  }
  let pending = pendingHostVars.get(inv);
  for (const [name, vars] of dv.hosts) {
    const h = inv.hosts.get(name);
    if (h) h.dirVars = { ...h.dirVars, ...vars };
    else {
      if (!pending) {
        pending = new Map();
        pendingHostVars.set(inv, pending);
      }
      pending.set(name, { ...pending.get(name), ...vars });
    }
  }
}

/** Load and merge inventories in the order given (later files add to and override earlier ones). */
export function loadInventories(paths: string[]): Inventory {
  const inv = emptyInventory();
  const varDirs: string[] = [];
  for (const p of paths) {
    const full = resolve(p);
    let isDir: boolean;
    try {
      isDir = statSync(full).isDirectory();
    } catch {
      throw parseError(`inventory ${p} not found`, undefined, 'check the -i path');
    }
    const files = isDir ? inventoryFilesIn(full) : [full];
    if (isDir && files.length === 0)
      throw parseError(
        `inventory directory ${p} has no *.yml, *.yaml or extensionless files and no inventory scripts`,
        undefined,
        'check the -i path',
      );
    if (!isDir && isNonExecutableScript(full))
      throw parseError(
        `inventory ${p} starts with a #! line but is not executable, so it can be neither run as an inventory script nor read as YAML`,
        undefined,
        `make it executable: chmod +x ${p}`,
      );
    for (const f of files) {
      if (isInventoryScript(f)) parseInventoryScript(inv, f);
      else parseInventoryFile(inv, f);
    }
    varDirs.push(isDir ? full : dirname(full));
  }
  finishInventory(inv);
  // Folder vars go on after every file is read, so group_vars/NAME finds NAME wherever it was defined.
  for (const d of [...new Set(varDirs)]) applyDirVars(inv, loadDirVars(d));
  return inv;
}

/** group_vars/ and host_vars/ beside the playbook: they override the inventory-adjacent ones. */
export function addPlaybookDirVars(inv: Inventory, playbookDir: string): void {
  applyDirVars(inv, loadDirVars(resolve(playbookDir)));
}

/**
 * Ansible's implicit localhost: usable by name when the inventory does not list it. It is in
 * no group's host list (so `all` does not match it) but takes group_vars/all like any host.
 */
export function ensureImplicitLocalhost(inv: Inventory, name = 'localhost'): void {
  if (inv.hosts.has(name) || !IMPLICIT_LOCALHOSTS.has(name)) return;
  const h = ensureHost(inv, name);
  h.groups = ['all'];
  h.dirVars = { ...pendingHostVars.get(inv)?.get(name) };
  h.vars = { connection: 'local' };
}
