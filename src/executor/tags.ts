// --tags / --skip-tags selection with Ansible's special tags: `always` runs unless skipped
// explicitly, `never` runs only when asked for by one of its other tags (or `never`),
// `all`, `tagged` and `untagged` match what their names say.

export interface TagFilter {
  tags: readonly string[];
  skipTags: readonly string[];
}

export function shouldRun(taskTags: readonly string[], f: TagFilter): boolean {
  const has = (t: string) => taskTags.includes(t);
  const tagged = taskTags.some((t) => t !== 'always' && t !== 'never');
  const matches = (wanted: readonly string[]): boolean =>
    wanted.some(
      (w) =>
        (w === 'all' && !has('never')) ||
        (w === 'tagged' && tagged) ||
        (w === 'untagged' && taskTags.length === 0) ||
        has(w),
    );

  if (f.skipTags.length > 0 && matches(f.skipTags)) return false;
  if (f.tags.length === 0 || (f.tags.length === 1 && f.tags[0] === 'all')) return !has('never');
  if (has('always')) return true;
  if (has('never')) return f.tags.some((w) => w !== 'all' && w !== 'tagged' && w !== 'untagged' && has(w));
  return matches(f.tags);
}

/** Ansible's tags with a meaning of their own: never "unknown". */
const SPECIAL = new Set(['all', 'tagged', 'untagged', 'always', 'never']);

/**
 * `--tags` / `--skip-tags` values that match no tag in the playbook (a typo selects nothing,
 * or skips nothing, silently otherwise), with the tags the playbook has.
 */
export function unmatchedTags(f: TagFilter, known: ReadonlySet<string>): { tags: string[]; skipTags: string[] } {
  const miss = (ts: readonly string[]) => ts.filter((t) => !SPECIAL.has(t) && !known.has(t));
  return { tags: miss(f.tags), skipTags: miss(f.skipTags) };
}
