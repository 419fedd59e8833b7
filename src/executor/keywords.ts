// Keyword inheritance play -> block (outer -> inner) -> task, as the keyword table
// (playbook/keywords.ts) declares it: for an `innermost` keyword the nearest level that sets it
// wins (the play counts where the keyword is allowed there), else its `unset` value;
// `accumulate` keywords add up: conditions, tags and environments of every level.
import { fieldOf, type InnermostFields, inherited, KEYWORDS } from '../playbook/keywords.js';
import type { Expr, Play, Task, TaskKeywords } from '../playbook/model.js';

export type Effective = InnermostFields & {
  /** Environment mappings, outermost first (templated by the task runner). */
  environment: Array<Record<string, unknown> | string>;
  when: Expr[];
  tags: string[];
};

const INNERMOST = inherited('innermost').map((k) => ({
  field: fieldOf(k)!,
  fromPlay: (KEYWORDS[k].where as readonly string[]).includes('play'),
  unset: (KEYWORDS[k] as { unset?: unknown }).unset,
}));

export function effectiveKeywords(play: Play, chain: readonly TaskKeywords[], task: Task): Effective {
  const nodes = [...chain, task];
  const out: Record<string, unknown> = {};
  for (const { field, fromPlay, unset } of INNERMOST) {
    let v: unknown;
    for (let i = nodes.length - 1; i >= 0 && v === undefined; i--) v = (nodes[i] as unknown as Record<string, unknown>)[field];
    if (v === undefined && fromPlay) v = (play as unknown as Record<string, unknown>)[field];
    if (v === undefined) v = unset;
    if (v !== undefined) out[field] = v;
  }
  const environment: Effective['environment'] = [];
  if (play.environment !== undefined) environment.push(play.environment);
  for (const n of nodes) if (n.environment !== undefined) environment.push(n.environment);
  const tags = new Set(play.tags);
  for (const n of nodes) for (const t of n.tags) tags.add(t);
  return {
    ...(out as InnermostFields),
    environment,
    // An include's `when` decides once whether to load the file; it is not re-checked per task.
    when: nodes.flatMap((n) => ((n as { kind?: string }).kind === 'include_tasks' ? [] : n.when)),
    tags: [...tags],
  };
}
