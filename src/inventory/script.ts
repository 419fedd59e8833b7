// Executable inventories with Ansible's protocol: `-i ./nodes.py` runs the program with
// `--list` and reads the JSON it prints (groups with hosts, vars and children, and
// `_meta.hostvars`); when `_meta.hostvars` is missing it asks `--host NAME` for each host.
// A script that fails, hangs or prints something else is one clear error naming the script,
// what happened (exit code, signal, time limit) and the end of its stderr.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { assignVars } from '../util/merge-vars.js';
import { parseError, type TsbmError } from '../errors.js';
import type { Vars } from '../types.js';
import { addChild, addHostToGroup, ensureGroup, ensureHost } from './build.js';
import type { Inventory } from './model.js';
import { runScripts, type ScriptResult } from './script-runner.js';

/** Seconds a script may take per call, unless TSBM_INVENTORY_SCRIPT_TIMEOUT says otherwise. */
const DEFAULT_SCRIPT_TIMEOUT_S = 60;
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;
const HOST_CONCURRENCY = 8;
const TIMEOUT_ENV = 'TSBM_INVENTORY_SCRIPT_TIMEOUT';

/** An executable regular file that starts with `#!` or is an ELF binary: run, not read as YAML. */
export function isInventoryScript(path: string): boolean {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch {
    return false;
  }
  if (!st.isFile() || (st.mode & 0o111) === 0) return false;
  const head = Buffer.alloc(4);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const n = readSync(fd, head, 0, 4, 0);
    return (n >= 2 && head[0] === 0x23 && head[1] === 0x21) || (n === 4 && head.toString('latin1') === '\x7fELF');
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * A file that starts with a `#!` line but cannot be run (no x bit: a checkout or copy that lost
 * it): said so, instead of the YAML error its program text would give.
 */
export function isNonExecutableScript(path: string): boolean {
  let fd: number | undefined;
  try {
    const st = statSync(path);
    if (!st.isFile() || (st.mode & 0o111) !== 0) return false;
    fd = openSync(path, 'r');
    const head = Buffer.alloc(64);
    const n = readSync(fd, head, 0, head.length, 0);
    return /^#!\s*\/\S/.test(head.subarray(0, n).toString('latin1'));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function scriptTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[TIMEOUT_ENV]?.trim();
  if (!raw) return DEFAULT_SCRIPT_TIMEOUT_S * 1000;
  const s = Number(raw);
  if (!Number.isFinite(s) || s <= 0)
    throw parseError(`${TIMEOUT_ENV}="${raw}" is not a number of seconds`, undefined, `e.g. ${TIMEOUT_ENV}=300`);
  return Math.round(s * 1000);
}

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function commandLine(file: string, args: string[]): string {
  return [file, ...args].join(' ');
}

function tailOf(stderr: string): string {
  const lines = stderr.trimEnd().split('\n').slice(-8).join(' | ');
  return lines.length > 1200 ? `…${lines.slice(-1200)}` : lines;
}

/** What went wrong with one call, as the error the operator sees; undefined when it went well. */
function failure(file: string, args: string[], r: ScriptResult, timeoutMs: number): TsbmError | undefined {
  const cmd = commandLine(file, args);
  const stderr = r.stderrTail.trim() ? `; its stderr ends: ${tailOf(r.stderrTail)}` : '; it wrote nothing on stderr';
  if (r.startError)
    return parseError(`cannot run inventory script ${cmd}: ${r.startError}`, undefined, 'check that it is executable, its #! line, and that the interpreter is installed');
  if (r.timedOut)
    return parseError(
      `inventory script ${cmd} did not finish within ${timeoutMs / 1000} s and was stopped${stderr}`,
      undefined,
      `raise the limit with ${TIMEOUT_ENV}=SECONDS, or make the script answer faster (cache what it fetches)`,
    );
  if (r.tooLarge)
    return parseError(`inventory script ${cmd} printed more than ${MAX_OUTPUT_BYTES >> 20} MiB and was stopped`, undefined, 'print only the inventory JSON');
  if (r.code !== 0)
    return parseError(
      `inventory script ${cmd} ${r.signal ? `was killed by ${r.signal}` : `exited with code ${r.code}`}${stderr}`,
      undefined,
      `run it by hand to see why: ${cmd}`,
    );
  return undefined;
}

function parseJson(file: string, args: string[], text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const m = /position (\d+)/.exec((e as Error).message);
    let where = '';
    if (m) {
      const before = text.slice(0, Number(m[1]));
      where = ` at line ${before.split('\n').length} column ${before.length - before.lastIndexOf('\n')}`;
    }
    const start = text.trim().slice(0, 60).replace(/\s+/g, ' ');
    throw parseError(
      `inventory script ${commandLine(file, args)} printed something that is not JSON${where} (it starts: ${JSON.stringify(start)})`,
      undefined,
      'an inventory script prints one JSON object on stdout; send messages to stderr',
    );
  }
}

function groupError(file: string, group: string, what: string): TsbmError {
  return parseError(
    `inventory script ${file} --list: group "${group}" ${what}`,
    undefined,
    'a group is a list of host names, or {"hosts": [...], "vars": {...}, "children": [...]}',
  );
}

/** Adds one group of `--list` output; returns the hosts it named. */
function addGroup(inv: Inventory, file: string, name: string, data: unknown, hosts: Set<string>): void {
  const group = ensureGroup(inv, name);
  let def: Record<string, unknown>;
  if (Array.isArray(data)) def = { hosts: data };
  else if (isMap(data)) {
    // Ansible's shorthand: a mapping without hosts/vars/children is a host of that name with those vars.
    def = 'hosts' in data || 'vars' in data || 'children' in data ? data : { hosts: [name], vars: data };
  } else if (data === null || data === undefined) def = {};
  else throw groupError(file, name, `must be a list of hosts or a mapping, found ${typeof data}`);

  if (def.hosts !== undefined && def.hosts !== null) {
    if (!Array.isArray(def.hosts) || !def.hosts.every((h) => typeof h === 'string' && h !== ''))
      throw groupError(file, name, 'has "hosts" that is not a list of host names');
    for (const h of def.hosts as string[]) {
      ensureHost(inv, h);
      addHostToGroup(group, h);
      hosts.add(h);
    }
  }
  if (def.vars !== undefined && def.vars !== null) {
    if (!isMap(def.vars)) throw groupError(file, name, 'has "vars" that is not a mapping');
    assignVars(group.vars, def.vars);
  }
  if (def.children !== undefined && def.children !== null) {
    if (!Array.isArray(def.children) || !def.children.every((c) => typeof c === 'string' && c !== ''))
      throw groupError(file, name, 'has "children" that is not a list of group names');
    for (const c of def.children as string[]) {
      ensureGroup(inv, c);
      if (c !== name) addChild(group, c);
    }
  }
}

/** Runs one inventory script and adds what it prints to the inventory under construction. */
export function parseInventoryScript(inv: Inventory, file: string): void {
  const timeoutMs = scriptTimeoutMs();
  const opts = { timeoutMs, concurrency: HOST_CONCURRENCY, maxOutputBytes: MAX_OUTPUT_BYTES };
  const list = runScripts([{ file, args: ['--list'] }], opts)[0]!;
  const bad = failure(file, ['--list'], list, timeoutMs);
  if (bad) throw bad;
  const data = parseJson(file, ['--list'], list.stdout);
  if (!isMap(data))
    throw parseError(`inventory script ${file} --list must print a JSON object of groups, found ${Array.isArray(data) ? 'a list' : typeof data}`, undefined, 'e.g. {"all": {"hosts": ["node01"]}, "_meta": {"hostvars": {}}}');
  inv.sources.push(file);

  const hosts = new Set<string>();
  let hostvars: Record<string, unknown> | undefined;
  for (const [name, gdata] of Object.entries(data)) {
    if (name === '_meta') {
      if (isMap(gdata) && gdata.hostvars !== undefined) {
        if (!isMap(gdata.hostvars)) throw parseError(`inventory script ${file} --list: _meta.hostvars must be a mapping of host names to variables`);
        hostvars = gdata.hostvars;
      }
      continue;
    }
    addGroup(inv, file, name, gdata, hosts);
  }

  const setVars = (host: string, vars: unknown, from: string) => {
    if (vars === undefined || vars === null) return;
    if (!isMap(vars)) throw parseError(`inventory script ${from}: the variables of host "${host}" must be a mapping`);
    assignVars(ensureHost(inv, host).vars, vars as Vars);
  };
  if (hostvars) {
    for (const h of hosts) setVars(h, hostvars[h], `${file} --list`);
    return;
  }
  // No _meta: one `--host NAME` per host, a few at a time.
  const names = [...hosts];
  const results = runScripts(names.map((h) => ({ file, args: ['--host', h] })), opts);
  results.forEach((r, i) => {
    const args = ['--host', names[i]!];
    const err = failure(file, args, r, timeoutMs);
    if (err) throw err;
    if (r.stdout.trim() === '') return;
    setVars(names[i]!, parseJson(file, args, r.stdout), commandLine(file, args));
  });
}
