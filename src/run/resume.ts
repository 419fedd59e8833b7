// `tsbm run ... --resume RUN`: the same run, continued. The resumed run's scope (limit, tags,
// start task, check/diff, shard) comes back from its journal; options given again must match
// it. Its extra vars come back from the same sources: -e @files are read again, and values
// given inline must be given again (the journal holds names and salted hashes, never values);
// either way the result is checked against the recorded hashes.
import { TsbmError } from '../errors.js';
import type { RunOptions } from '../executor/options.js';
import type { JournalContents } from '../journal/reader.js';
import { type RecordedVars, type RunScope, reconcileScope, scopeOf, type VarSource } from '../journal/scope.js';
import { hashVars, newSalt, stableJson } from '../journal/var-hash.js';
import type { Vars } from '../types.js';
import { type ExtraVarSource, mergeSources, parseExtraVarsArg } from './extra-vars.js';

export interface PreparedResume {
  previous: JournalContents;
  opts: RunOptions;
  sources: ExtraVarSource[];
  force: boolean;
  /** What the operator should know (options restored, values accepted under --force). */
  notes: string[];
}

const list = (names: Iterable<string>) => [...names].sort().join(', ');

/** The options and extra vars a resume of `previous` runs with, or an options error naming every difference. */
export async function prepareResume(
  previous: JournalContents,
  given: RunOptions,
  givenSources: ExtraVarSource[],
  force: boolean,
): Promise<PreparedResume> {
  const header = previous.header;
  if (!header) {
    throw new TsbmError('options', `${previous.file} is not a run journal (no header)`, { hint: 'pass a run id from `tsbm runs list`' });
  }
  const runId = header.runId;
  const recorded = scopeOf(header);
  const r = reconcileScope(recorded, given);
  if (r.differences.length) {
    throw new TsbmError('options', `cannot resume run ${runId} with other options: ${r.differences.join('; ')}`, {
      hint: 'a resume continues the same run: leave these out (they are restored) or start a new run without --resume',
    });
  }
  const notes = r.restored.length ? [`resuming run ${runId} with its options: ${r.restored.join(' ')}`] : [];
  const opts: RunOptions = { ...given, ...r.scope };
  if (r.scope.limit === undefined) delete opts.limit;
  if (r.scope.startAtTask === undefined) delete opts.startAtTask;
  if (r.scope.shard === undefined) delete opts.shard;
  if (!r.scope.rebuild) delete opts.rebuild;
  if (!recorded.extraVars) {
    // A journal from before extra vars were recorded by name and hash: nothing to check against.
    return { previous, opts, sources: givenSources, force, notes };
  }
  const vars = await restoreExtraVars(runId, recorded.extraVars, givenSources, force);
  notes.push(...vars.notes);
  opts.extraVars = mergeSources(vars.sources);
  return { previous, opts, sources: vars.sources, force, notes };
}

/**
 * Replays the recorded sources in order: a file is read again, an inline argument's variables
 * take the values given now. Then every final value is checked against the recorded hash.
 */
async function restoreExtraVars(
  runId: string,
  rec: RecordedVars,
  givenSources: ExtraVarSource[],
  force: boolean,
): Promise<{ sources: ExtraVarSource[]; notes: string[] }> {
  const given = mergeSources(givenSources);
  const recordedNames = new Set(Object.keys(rec.hashes));
  // The source that set each variable last is the one its value comes from.
  const lastSetter = new Map<string, number>();
  rec.sources.forEach((s, i) => {
    for (const n of 'file' in s ? s.names : s.inline) lastSetter.set(n, i);
  });

  const sources: ExtraVarSource[] = [];
  const missing = new Set<string>();
  const changed = new Set<string>();
  rec.sources.forEach((s, i) => {
    if ('file' in s) {
      let vars: Vars;
      try {
        vars = parseExtraVarsArg(`@${s.file}`);
      } catch (e) {
        throw new TsbmError('options', `cannot resume run ${runId}: it read -e @${s.file}, which cannot be read now: ${(e as Error).message}`, {
          hint: 'restore the file, or start a new run without --resume',
        });
      }
      sources.push({ kind: 'file', path: s.file, vars });
      return;
    }
    const vars: Vars = {};
    for (const n of s.inline) {
      if (Object.hasOwn(given, n)) vars[n] = given[n];
      else if (lastSetter.get(n) === i) missing.add(n);
    }
    sources.push({ kind: 'inline', vars });
  });
  const final = mergeSources(sources);
  // A value given now for a variable a file sets last would silently lose: it must agree.
  for (const [n, v] of Object.entries(given)) {
    if (!recordedNames.has(n)) changed.add(n);
    else if (Object.hasOwn(final, n) && stableJson(final[n]) !== stableJson(v)) changed.add(n);
  }
  for (const n of recordedNames) if (!Object.hasOwn(final, n) && !missing.has(n)) missing.add(n);
  if (missing.size) {
    throw new TsbmError('options', `resuming run ${runId} needs the values of ${list(missing)} again: extra vars given on the command line are never stored`, {
      hint: `give them as before (-e NAME=VALUE, -e '{...}'); -e @files are read again by themselves`,
    });
  }
  const extra = [...changed].filter((n) => !recordedNames.has(n));
  const now = await hashVars(
    Object.fromEntries(Object.entries(final).filter(([n]) => recordedNames.has(n))),
    rec.salt,
  );
  for (const n of recordedNames) if (now[n] !== rec.hashes[n]) changed.add(n);
  const notes: string[] = [];
  if (changed.size) {
    const what = [
      [...changed].some((n) => recordedNames.has(n)) ? `the values of ${list([...changed].filter((n) => recordedNames.has(n)))} differ from run ${runId}'s (checked against the hashes it recorded)` : '',
      extra.length ? `${list(extra)} ${extra.length === 1 ? 'was' : 'were'} not set in run ${runId}` : '',
    ]
      .filter(Boolean)
      .join('; ');
    if (!force) {
      throw new TsbmError('options', `cannot resume run ${runId}: ${what}`, {
        hint: 'give the same values as before, or add --force to resume with these (a rotated password, say)',
      });
    }
    notes.push(`--force: ${what}`);
    // Values given now win, as a last -e would.
    const now = [...changed].filter((n) => Object.hasOwn(given, n));
    if (now.length) sources.push({ kind: 'inline', vars: Object.fromEntries(now.map((n) => [n, given[n]])) });
  }
  return { sources, notes };
}

/** What the journal records of a run's scope: options, and extra vars as names and salted hashes. */
export async function recordScope(opts: RunOptions, sources: readonly ExtraVarSource[]): Promise<RunScope> {
  const salt = newSalt();
  const recorded: VarSource[] = sources.map((s) =>
    s.kind === 'file' ? { file: s.path, names: Object.keys(s.vars) } : { inline: Object.keys(s.vars) },
  );
  return {
    ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
    tags: opts.tags,
    skipTags: opts.skipTags,
    ...(opts.startAtTask !== undefined ? { startAtTask: opts.startAtTask } : {}),
    check: opts.check,
    diff: opts.diff,
    ...(opts.shard ? { shard: opts.shard } : {}),
    ...(opts.rebuild ? { rebuild: true } : {}),
    extraVars: { sources: recorded, salt, hashes: await hashVars(mergeSources(sources), salt) },
  };
}
