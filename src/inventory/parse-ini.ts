// Reads an inventory in Ansible's INI format into an Inventory under construction, with the
// meaning ansible-inventory gives it: `[group]` sections of host lines (`host[01:10] key=value`,
// `host:PORT`), `[group:vars]` of `key = value` lines, `[group:children]` of group names, host
// lines before any section ungrouped, values typed as Python literals (python-literal.ts).
// A child group must be declared somewhere in the file ([name] or [name:children]) and a
// [name:vars] section needs the group declared too, as Ansible requires.
import { readFileSync } from 'node:fs';
import { parseError, type SourcePos } from '../errors.js';
import { assignVars } from '../util/merge-vars.js';
import { addChild, addHostToGroup, ensureGroup, ensureHost } from './build.js';
import type { Inventory } from './model.js';
import { pythonLiteral } from './python-literal.js';
import { expandHostPattern, HostRangeError } from './ranges.js';

type SectionKind = 'hosts' | 'vars' | 'children';

const SECTION = /^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:#.*)?$/;
const GROUP_LINE = /^([^:\]\s]+)\s*(?:#.*)?$/;

/** A group used before it is declared: as a child, or by its own :vars section. */
interface Pending {
  pos: SourcePos;
  kind: 'vars' | 'children';
  parents: string[];
}

/** Ansible's value typing: a Python literal becomes its value, anything else stays text. */
export function iniValue(text: string): unknown {
  const lit = pythonLiteral(text);
  return lit ? lit.value : text;
}

export function parseIniFile(inv: Inventory, file: string): void {
  parseIniText(inv, file, readFileSync(file, 'utf8'));
}

export function parseIniText(inv: Inventory, file: string, text: string): void {
  inv.sources.push(file);
  const pending = new Map<string, Pending>();
  let group = 'ungrouped';
  let kind: SectionKind = 'hosts';
  const lines = text.split(/\r\n|\r|\n/);
  for (const [n, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const pos: SourcePos = { file, line: n + 1, col: raw.length - raw.trimStart().length + 1 };
    const section = SECTION.exec(line);
    if (section) {
      group = section[1]!;
      const k = section[2] ?? 'hosts';
      if (k !== 'hosts' && k !== 'vars' && k !== 'children')
        throw parseError(`section [${group}:${k}] has an unknown type "${k}"`, pos, 'a section is [GROUP], [GROUP:vars] or [GROUP:children]');
      kind = k;
      declare(inv, pending, group, kind, pos);
      continue;
    }
    if (line.startsWith('[') && line.endsWith(']'))
      throw parseError(`invalid section ${line}`, pos, 'a section is [GROUP], [GROUP:vars] or [GROUP:children]: no spaces, at most one ":"');
    if (kind === 'hosts') hostLine(inv, group, line, pos);
    else if (kind === 'vars') varLine(inv, group, line, pos);
    else childLine(inv, pending, group, line, pos);
  }
  for (const [name, p] of pending) {
    if (p.kind === 'vars')
      throw parseError(`section [${name}:vars] is for group "${name}", which this inventory never declares`, p.pos, `declare it with a [${name}] or [${name}:children] section, or fix the name`);
    throw parseError(
      `section [${p.parents.at(-1)}:children] names group "${name}", which this inventory never declares`,
      p.pos,
      `declare it with a [${name}] section (its hosts) or [${name}:children], or fix the name`,
    );
  }
}

/** A section header: the group exists from here on; a declaration settles what was pending. */
function declare(inv: Inventory, pending: Map<string, Pending>, name: string, kind: SectionKind, pos: SourcePos): void {
  if (!inv.groups.has(name) && kind === 'vars' && !pending.has(name)) pending.set(name, { pos, kind: 'vars', parents: [] });
  ensureGroup(inv, name, kind === 'vars' ? undefined : pos);
  const p = pending.get(name);
  if (!p || kind === 'vars') return;
  if (p.kind === 'children') settleChildren(inv, pending, name);
  else pending.delete(name);
}

function settleChildren(inv: Inventory, pending: Map<string, Pending>, name: string): void {
  const p = pending.get(name);
  if (!p) return;
  pending.delete(name);
  for (const parent of p.parents) {
    addChild(ensureGroup(inv, parent), name);
    if (pending.get(parent)?.kind === 'children') settleChildren(inv, pending, parent);
  }
}

function childLine(inv: Inventory, pending: Map<string, Pending>, parent: string, line: string, pos: SourcePos): void {
  const m = GROUP_LINE.exec(line);
  if (!m) throw parseError(`expected a group name in [${parent}:children], found "${line}"`, pos, 'write one group name per line');
  const child = m[1]!;
  if (inv.groups.has(child)) {
    addChild(ensureGroup(inv, parent), child);
    return;
  }
  const p = pending.get(child);
  if (p) p.parents.push(parent);
  else pending.set(child, { pos, kind: 'children', parents: [parent] });
}

function varLine(inv: Inventory, group: string, line: string, pos: SourcePos): void {
  const eq = line.indexOf('=');
  if (eq < 0) throw parseError(`expected key=value in [${group}:vars], found "${line}"`, pos, 'write one `name = value` per line');
  const key = line.slice(0, eq).trim();
  assignVars(ensureGroup(inv, group).vars, { [key]: iniValue(line.slice(eq + 1).trim()) });
}

function hostLine(inv: Inventory, group: string, line: string, pos: SourcePos): void {
  let words: string[];
  try {
    words = shellWords(line);
  } catch (e) {
    throw parseError(`cannot read host line "${line}": ${(e as Error).message}`, pos, 'close the quote');
  }
  const [pattern, ...assignments] = words;
  if (pattern === undefined) return; // only a comment after all
  if (pattern === '---') throw parseError('"---" is not a host: this looks like a YAML file', pos, 'name the file .yml (YAML) or write it in the INI format');
  if (pattern.endsWith(':')) throw parseError(`host "${pattern}" ends in ":", which is for a port`, pos, `write ${pattern}PORT or drop the ":"`);
  const vars: Record<string, unknown> = {};
  for (const a of assignments) {
    const eq = a.indexOf('=');
    if (eq < 0)
      throw parseError(`expected key=value after host "${pattern}", found "${a}"`, pos, 'host variables are key=value words on the host line (quote a value with spaces)');
    Object.defineProperty(vars, a.slice(0, eq), { value: iniValue(a.slice(eq + 1)), enumerable: true, writable: true, configurable: true });
  }
  let entry: ReturnType<typeof expandHostPattern>;
  try {
    entry = expandHostPattern(pattern);
  } catch (e) {
    if (e instanceof HostRangeError) throw parseError(e.message, pos, 'e.g. node[01:20] or rack[a:c]-[1:2]');
    throw e;
  }
  const g = ensureGroup(inv, group);
  for (const name of entry.names) {
    const h = ensureHost(inv, name, pos);
    if (entry.port !== undefined) h.vars.ansible_port = entry.port;
    assignVars(h.vars, vars);
    addHostToGroup(g, name);
  }
}

/**
 * A host line's words as Python's shlex (POSIX, with comments) splits them, which is how
 * Ansible reads them: quotes group and are removed, a backslash escapes the next character,
 * and `#` starts a comment even inside a word.
 */
export function shellWords(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === ' ' || c === '\t') {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
    } else if (c === '#') break;
    else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error('no closing quotation');
      cur += line.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        // In double quotes a backslash escapes only a quote or a backslash.
        if (line[j] === '\\' && (line[j + 1] === '"' || line[j + 1] === '\\')) j++;
        cur += line[j];
      }
      if (j >= line.length) throw new Error('no closing quotation');
      inWord = true;
      i = j;
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new Error('no escaped character');
      cur += line[++i];
      inWord = true;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) out.push(cur);
  return out;
}
