// A run's scope: what it targets and how (limit, tags, start task, check/diff, shard, extra
// vars). It is recorded in the journal header so `--resume` continues the same run: options
// left out on the command line are restored, and options given that differ are refused, each
// difference named. Extra vars are recorded as names, where each came from, and salted hashes
// (src/journal/var-hash.ts), never values.

/** Where the run's -e values came from, in command-line order. */
export type VarSource = { file: string; names: string[] } | { inline: string[] };

export interface RecordedVars {
  sources: VarSource[];
  salt: string;
  /** Final (merged) variable name -> hash of its value. */
  hashes: Record<string, string>;
}

export interface ScopeOptions {
  limit?: string;
  tags: string[];
  skipTags: string[];
  startAtTask?: string;
  check: boolean;
  diff: boolean;
  shard?: { index: number; total: number };
  /** --rebuild: a permission, not a target; a resume keeps it (and may add it). */
  rebuild?: boolean;
}

export interface RunScope extends ScopeOptions {
  extraVars: RecordedVars;
}

/** "check", "diff", "check+diff" or "normal". */
export function modeLabel(s: { check: boolean; diff: boolean }): string {
  return s.check && s.diff ? 'check+diff' : s.check ? 'check' : s.diff ? 'diff' : 'normal';
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** The scope a journal recorded; journals written before scopes were recorded carry it in `options`. */
export function scopeOf(header: { scope?: RunScope | undefined; options?: Record<string, unknown> }): ScopeOptions & { extraVars?: RecordedVars } {
  if (header.scope) return header.scope;
  const o = header.options ?? {};
  const shard = o.shard as { index?: unknown; total?: unknown } | undefined;
  return {
    ...(typeof o.limit === 'string' ? { limit: o.limit } : {}),
    tags: strings(o.tags),
    skipTags: strings(o.skipTags),
    ...(typeof o.startAtTask === 'string' ? { startAtTask: o.startAtTask } : {}),
    check: o.check === true,
    diff: o.diff === true,
    ...(shard && typeof shard.index === 'number' && typeof shard.total === 'number' ? { shard: { index: shard.index, total: shard.total } } : {}),
    ...(o.rebuild === true ? { rebuild: true } : {}),
  };
}

export interface Reconciled {
  scope: ScopeOptions;
  /** Options taken from the resumed run because the command line left them out ("--limit node01"). */
  restored: string[];
  /** Options given that differ from the resumed run's, each described. */
  differences: string[];
}

const q = (s: string) => JSON.stringify(s);
const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));
const shardText = (s: { index: number; total: number } | undefined) => (s ? `${s.index}/${s.total}` : 'none');

/**
 * The scope a resume runs with: the recorded one, with every option the command line gave
 * checked against it. An option left out (no -l, no -t, no --check) means "as before".
 */
export function reconcileScope(recorded: ScopeOptions, given: ScopeOptions): Reconciled {
  const restored: string[] = [];
  const differences: string[] = [];
  const scope: ScopeOptions = { ...recorded, tags: [...recorded.tags], skipTags: [...recorded.skipTags] };

  const text = (name: string, was: string | undefined, now: string | undefined) => {
    if (now === undefined) {
      if (was !== undefined) restored.push(`${name} ${q(was)}`);
    } else if (now !== was) differences.push(`${name} ${q(now)} (the run had ${was === undefined ? 'none' : q(was)})`);
  };
  const list = (name: string, was: string[], now: string[]) => {
    if (now.length === 0) {
      if (was.length) restored.push(`${name} ${was.join(',')}`);
    } else if (!sameSet(was, now)) differences.push(`${name} ${now.join(',')} (the run had ${was.length ? was.join(',') : 'none'})`);
  };
  text('--limit', recorded.limit, given.limit);
  list('--tags', recorded.tags, given.tags);
  list('--skip-tags', recorded.skipTags, given.skipTags);
  text('--start-at-task', recorded.startAtTask, given.startAtTask);
  if (given.shard === undefined) {
    if (recorded.shard) restored.push(`--shard ${shardText(recorded.shard)}`);
  } else if (shardText(given.shard) !== shardText(recorded.shard)) {
    differences.push(`--shard ${shardText(given.shard)} (the run had ${shardText(recorded.shard)})`);
  }
  // There is no --no-check: a check run resumes in check mode, and a real run never does.
  if (given.check && !recorded.check) differences.push('--check (the run was a real run: its done tasks really ran)');
  else if (recorded.check && !given.check) restored.push('--check');
  if (given.diff && !recorded.diff) differences.push('--diff (the run had no --diff)');
  else if (recorded.diff && !given.diff) restored.push('--diff');
  // A node the run was allowed to reinstall stays allowed: without it, a resume would refuse
  // the active nodes its own run had admitted.
  if (recorded.rebuild && !given.rebuild) restored.push('--rebuild');
  if (recorded.rebuild || given.rebuild) scope.rebuild = true;
  return { scope, restored, differences };
}
