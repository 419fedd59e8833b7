// Validates the raw `tsbm run` flags into RunOptions (src/executor/options.ts). Pure, so every
// rule is unit-tested without spawning the CLI.
import { delimiter } from 'node:path';
import { parseShard } from '../executor/shard.js';
import { optionsError, TsbmError } from '../errors.js';
import type { OutputMode, RunOptions } from '../executor/options.js';
import { limitWithAbsoluteFiles } from '../inventory/patterns.js';
import { parseExtraVars } from '../run/extra-vars.js';
import { DEFAULT_FORKS } from '../executor/options.js';

/** The flags as commander hands them over (repeatable ones as arrays). */
export interface RawRunFlags {
  rebuild?: boolean;
  inventory?: string[];
  limit?: string[];
  tags?: string[];
  skipTags?: string[];
  extraVars?: string[];
  forks?: number | string;
  check?: boolean;
  diff?: boolean;
  forceHandlers?: boolean;
  startAtTask?: string;
  listHosts?: boolean;
  listTasks?: boolean;
  listTags?: boolean;
  syntaxCheck?: boolean;
  output?: string;
  junit?: string;
  junitCases?: string;
  shard?: string;
  rolesPath?: string[];
}

const OUTPUT_MODES: readonly OutputMode[] = ['tty', 'plain', 'json'];

/** `-t a,b -t c` -> [a, b, c]; blanks dropped, duplicates kept once. */
export function splitList(values: readonly string[] | undefined): string[] {
  const out: string[] = [];
  for (const v of values ?? []) {
    for (const part of v.split(',')) {
      const t = part.trim();
      if (t && !out.includes(t)) out.push(t);
    }
  }
  return out;
}

/** `--roles-path a:b --roles-path c` -> [a, b, c] (the platform's path separator, as TSBM_ROLES_PATH). */
export function splitPath(values: readonly string[] | undefined): string[] {
  return (values ?? []).flatMap((v) => v.split(delimiter)).map((d) => d.trim()).filter(Boolean);
}

export function parseForks(value: string | number | undefined): number {
  if (value === undefined) return DEFAULT_FORKS;
  const s = String(value).trim();
  if (!/^\d+$/.test(s) || Number(s) < 1 || !Number.isSafeInteger(Number(s))) {
    throw optionsError(`--forks must be a positive integer, got "${s}"`, 'e.g. -f 20');
  }
  return Number(s);
}

/** What the project config file and TSBM_* variables give when a flag is not (src/config/). */
export interface RunDefaults {
  inventory?: string[];
  forks?: number;
  /** Roles directories from the config file (TSBM_ROLES_PATH is read by the loader itself). */
  rolesPath?: string[];
  forceHandlers?: boolean;
}

export function buildRunOptions(
  playbook: string,
  raw: RawRunFlags,
  env: { verbosity: 0 | 1 | 2 | 3; stdoutIsTTY: boolean; cwd?: string; defaults?: RunDefaults },
): RunOptions {
  if (!playbook.trim()) throw optionsError('no playbook given', 'tsbm run PLAYBOOK -i INVENTORY');
  let output: OutputMode = env.stdoutIsTTY ? 'tty' : 'plain';
  if (raw.output !== undefined) {
    if (!(OUTPUT_MODES as readonly string[]).includes(raw.output)) {
      throw optionsError(`--output must be one of ${OUTPUT_MODES.join(', ')}, got "${raw.output}"`);
    }
    output = raw.output as OutputMode;
  }
  const given = (raw.inventory ?? []).map((i) => i.trim()).filter(Boolean);
  const inventories = given.length > 0 ? given : [...(env.defaults?.inventory ?? [])];
  const limits = (raw.limit ?? []).map((l) => l.trim()).filter(Boolean);
  // `-l "$NODES"` with NODES unset must not mean every host (ansible-playbook runs them all).
  if ((raw.limit ?? []).length > 0 && limits.length === 0) {
    throw new TsbmError('runtime', '--limit is empty, so it matches no host: nothing to do', {
      hint: 'name the hosts (-l node01), or leave --limit out to run on every host',
    });
  }
  if (raw.startAtTask !== undefined && !raw.startAtTask.trim()) throw optionsError('--start-at-task needs a task name');
  if (raw.junit !== undefined && !raw.junit.trim()) throw optionsError('--junit needs a file name');
  const opts: RunOptions = {
    playbook,
    inventories,
    tags: splitList(raw.tags),
    skipTags: splitList(raw.skipTags),
    extraVars: parseExtraVars(raw.extraVars ?? [], env.cwd),
    forks: raw.forks !== undefined ? parseForks(raw.forks) : (env.defaults?.forks ?? DEFAULT_FORKS),
    check: raw.check === true,
    diff: raw.diff === true,
    ...(raw.rebuild === true ? { rebuild: true } : {}),
    ...(raw.forceHandlers === true || env.defaults?.forceHandlers === true ? { forceHandlers: true } : {}),
    listHosts: raw.listHosts === true,
    listTasks: raw.listTasks === true,
    listTags: raw.listTags === true,
    syntaxCheck: raw.syntaxCheck === true,
    output,
    verbosity: env.verbosity,
  };
  // Several --limit patterns narrow together like one `a:b` pattern list (union), as Ansible joins them.
  if (limits.length > 0) opts.limit = limitWithAbsoluteFiles(limits.join(':'), env.cwd ?? process.cwd());
  if (raw.startAtTask !== undefined) opts.startAtTask = raw.startAtTask;
  if (raw.junit !== undefined) opts.junit = raw.junit;
  if (raw.junitCases !== undefined) {
    if (raw.junitCases !== 'host' && raw.junitCases !== 'task') {
      throw optionsError(`--junit-cases must be host or task, got "${raw.junitCases}"`, 'host: a testcase per host per play; task: per host and task');
    }
    if (raw.junit === undefined) throw optionsError('--junit-cases needs --junit FILE');
    opts.junitCases = raw.junitCases;
  }
  if (raw.shard !== undefined) opts.shard = parseShard(raw.shard);
  const rolesPath = [...splitPath(raw.rolesPath), ...(env.defaults?.rolesPath ?? [])];
  if (rolesPath.length > 0) opts.rolesPath = rolesPath;
  return opts;
}
