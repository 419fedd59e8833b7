// Reads one Ansible inventory file (YAML here, INI through parse-ini.ts) into an Inventory under
// construction. Structural mistakes are parse errors at file:line:col that show the expected shape.
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { assignVars } from '../util/merge-vars.js';
import { parseError, TsbmError } from '../errors.js';
import { loadYamlFile, type PathSeg, type YamlSource } from '../schema/yaml-source.js';
import type { Vars } from '../types.js';
import { addChild, addHostToGroup, ensureGroup, ensureHost } from './build.js';
import type { Inventory } from './model.js';
import { parseIniFile } from './parse-ini.js';
import { expandHostPattern, HostRangeError } from './ranges.js';
import { didYouMean } from '../schema/did-you-mean.js';

const GROUP_KEYS = ['hosts', 'vars', 'children'] as const;

const SHAPE =
  'all: {hosts: {node01: {ansible_host: 10.0.0.11}}, vars: {ssh_user: root}, children: {rack1: {hosts: {node02: }}}}';

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const kindOf = (v: unknown): string =>
  Array.isArray(v) ? 'a list' : v === null ? 'empty' : typeof v === 'object' ? 'a mapping' : `a ${typeof v}`;

const FORMAT_HINT = "write it in Ansible's YAML inventory format (or its INI format, in a file named *.ini)";

/** An INI inventory starts with a [section] header or `host key=value` lines. */
function looksLikeIni(file: string): boolean {
  try {
    const first = readFileSync(file, 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '' && !l.startsWith('#') && !l.startsWith(';'));
    return first !== undefined && (/^\[[^\]]+\]/.test(first) || /^\S+\s+\w+=/.test(first));
  } catch {
    return false;
  }
}

/**
 * One inventory file, YAML or INI as ansible-inventory tells them apart: *.ini is INI; any other
 * file is YAML when it reads as a YAML mapping, else INI (a list of host names, [sections]).
 */
export function parseInventoryFile(inv: Inventory, file: string): void {
  if (extname(file).toLowerCase() === '.ini') {
    parseIniFile(inv, file);
    return;
  }
  let src: YamlSource;
  try {
    src = loadYamlFile(file);
  } catch (e) {
    if (!(e instanceof TsbmError && e.kind === 'parse' && looksLikeIni(file))) throw e;
    parseIniFile(inv, file);
    return;
  }
  const top = src.value;
  if (top === null || top === undefined) {
    inv.sources.push(file);
    return; // an empty file is an empty inventory
  }
  if (!isMap(top)) {
    // `node01\nnode02` reads as one YAML string: Ansible takes it as INI host lines.
    if (typeof top === 'string' || looksLikeIni(file)) {
      parseIniFile(inv, file);
      return;
    }
    throw parseError(
      `${file} is not an inventory: the top level of a YAML inventory is a mapping of group names, found ${kindOf(top)}`,
      src.pos([]),
      FORMAT_HINT,
    );
  }
  inv.sources.push(file);
  for (const [name, def] of Object.entries(top)) parseGroup(inv, src, name, def, [name], undefined);
}

function parseGroup(
  inv: Inventory,
  src: YamlSource,
  name: string,
  def: unknown,
  path: PathSeg[],
  parent: string | undefined,
): void {
  const group = ensureGroup(inv, name, src.keyPos(path));
  if (parent !== undefined && parent !== name) addChild(ensureGroup(inv, parent), name);
  if (def === null || def === undefined) return;
  if (!isMap(def)) {
    throw parseError(
      `group "${name}" must be a mapping with hosts:, vars: and/or children:, found ${kindOf(def)}`,
      src.pos(path),
      `the shape is ${SHAPE}`,
    );
  }
  for (const [key, value] of Object.entries(def)) {
    const at = [...path, key];
    if (!(GROUP_KEYS as readonly string[]).includes(key)) {
      const near = didYouMean(key, GROUP_KEYS);
      throw parseError(
        `unknown key "${key}" in group "${name}" (a group has hosts:, vars: and children:)`,
        src.keyPos(at),
        near
          ? `did you mean "${near}"?`
          : 'host variables go under hosts: NAME:, group variables under vars:',
      );
    }
    if (value === null || value === undefined) continue;
    if (key === 'vars') {
      if (!isMap(value))
        throw parseError(
          `vars of group "${name}" must be a mapping of variable names to values, found ${kindOf(value)}`,
          src.pos(at),
          'write one `name: value` per line under vars:',
        );
      assignVars(group.vars, value);
    } else if (key === 'hosts') {
      if (!isMap(value)) {
        const example = Array.isArray(value)
          ? value
              .slice(0, 2)
              .map((h) => `${String(h)}:`)
              .join(' ')
          : 'node01:';
        throw parseError(
          `hosts of group "${name}" must be a mapping of host names (each with its vars or empty), found ${kindOf(value)}`,
          src.pos(at),
          `write each host as a key ending in ":" (${example || 'node01:'}), not as a "- " list item`,
        );
      }
      parseHosts(inv, src, name, value, at);
    } else {
      if (!isMap(value)) {
        const example = Array.isArray(value)
          ? value
              .slice(0, 2)
              .map((g) => `${String(g)}:`)
              .join(' ')
          : 'rack1:';
        throw parseError(
          `children of group "${name}" must be a mapping of group names, found ${kindOf(value)}`,
          src.pos(at),
          `write each child group as a key ending in ":" (${example || 'rack1:'}), not as a "- " list item`,
        );
      }
      for (const [child, childDef] of Object.entries(value))
        parseGroup(inv, src, child, childDef, [...at, child], name);
    }
  }
}

function parseHosts(
  inv: Inventory,
  src: YamlSource,
  group: string,
  hosts: Record<string, unknown>,
  path: PathSeg[],
): void {
  const g = ensureGroup(inv, group);
  for (const [pattern, vars] of Object.entries(hosts)) {
    const at = [...path, pattern];
    let entry: ReturnType<typeof expandHostPattern>;
    try {
      entry = expandHostPattern(pattern);
    } catch (e) {
      if (e instanceof HostRangeError)
        throw parseError(e.message, src.keyPos(at), 'e.g. node[01:20] or rack[a:c]-[1:2]');
      throw e;
    }
    if (vars !== null && vars !== undefined && !isMap(vars)) {
      throw parseError(
        `host "${pattern}" must have a mapping of variables (or nothing), found ${kindOf(vars)}`,
        src.pos(at),
        `write the host's vars as a mapping under it, e.g. ${pattern}: {ansible_host: 10.0.0.11}`,
      );
    }
    for (const name of entry.names) {
      const h = ensureHost(inv, name, src.keyPos(at));
      if (entry.port !== undefined) h.vars.ansible_port = entry.port;
      if (vars) assignVars(h.vars, vars as Vars);
      addHostToGroup(g, name);
    }
  }
}
