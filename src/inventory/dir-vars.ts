// group_vars/ and host_vars/ folders: for each NAME, the files NAME, NAME.yml, NAME.yaml,
// NAME.json and every such file under a folder NAME/, merged in path order (later wins).
import { readdirSync, statSync } from 'node:fs';
import { assignVars } from '../util/merge-vars.js';
import { basename, extname, join } from 'node:path';
import { parseError } from '../errors.js';
import { loadYamlFile } from '../schema/yaml-source.js';
import type { Vars } from '../types.js';

const VAR_EXT = new Set(['', '.yml', '.yaml', '.json']);

export interface DirVars {
  groups: Map<string, Vars>;
  hosts: Map<string, Vars>;
}

const isVarFile = (name: string): boolean =>
  !name.startsWith('.') && !name.endsWith('~') && VAR_EXT.has(extname(name));

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of listDir(dir)) {
    if (e.startsWith('.')) continue;
    const p = join(dir, e);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else if (isVarFile(e)) out.push(p);
  }
  return out;
}

function loadVarFile(file: string): Vars {
  const src = loadYamlFile(file);
  const v = src.value;
  if (v === null || v === undefined) return {};
  if (typeof v !== 'object' || Array.isArray(v)) {
    throw parseError(
      `${file} must be a mapping of variable names to values`,
      src.pos([]),
      'write one `name: value` per line',
    );
  }
  return v as Vars;
}

/** Vars of every NAME in one group_vars/ or host_vars/ folder (missing folder: none). */
function loadKind(dir: string): Map<string, Vars> {
  const files = new Map<string, string[]>();
  for (const e of listDir(dir)) {
    if (e.startsWith('.')) continue;
    const p = join(dir, e);
    let name: string;
    let found: string[];
    if (statSync(p).isDirectory()) {
      name = e;
      found = filesUnder(p);
    } else if (isVarFile(e)) {
      name = basename(e, extname(e));
      found = [p];
    } else continue;
    files.set(name, [...(files.get(name) ?? []), ...found]);
  }
  const out = new Map<string, Vars>();
  for (const [name, list] of files) {
    const merged: Vars = {};
    for (const f of list.sort()) assignVars(merged, loadVarFile(f));
    out.set(name, merged);
  }
  return out;
}

export function loadDirVars(baseDir: string): DirVars {
  return { groups: loadKind(join(baseDir, 'group_vars')), hosts: loadKind(join(baseDir, 'host_vars')) };
}
