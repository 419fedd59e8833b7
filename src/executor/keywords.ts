// Keyword inheritance play -> block (outer -> inner) -> task: the innermost value that is
// set wins; `when` conditions and tags accumulate.
import type { Expr, Play, Task, TaskKeywords } from '../playbook/model.js';

export interface Effective {
  become: boolean;
  becomeUser?: string;
  /** Environment mappings, outermost first (templated by the task runner). */
  environment: Array<Record<string, unknown> | string>;
  noLog: boolean | string;
  ignoreErrors: boolean | string;
  ignoreUnreachable: boolean;
  delegateTo?: string;
  runOnce: boolean;
  timeout?: number;
  /** A condition is evaluated with a failed host's variables (fail-policy.ts). */
  anyErrorsFatal: boolean | string;
  resume?: 'skip' | 'rerun';
  when: Expr[];
  tags: string[];
}

export function effectiveKeywords(play: Play, chain: readonly TaskKeywords[], task: Task): Effective {
  const nodes = [...chain, task];
  const last = <K extends keyof TaskKeywords>(k: K): TaskKeywords[K] | undefined => {
    for (let i = nodes.length - 1; i >= 0; i--) {
      const v = nodes[i]![k];
      if (v !== undefined) return v;
    }
    return undefined;
  };
  const environment: Effective['environment'] = [];
  if (play.environment) environment.push(play.environment);
  for (const n of nodes) if (n.environment !== undefined) environment.push(n.environment);
  const tags = new Set(play.tags);
  for (const n of nodes) for (const t of n.tags) tags.add(t);
  const becomeUser = last('becomeUser') ?? play.becomeUser;
  const delegateTo = last('delegateTo');
  const timeout = last('timeout');
  const resume = last('resume');
  return {
    become: last('become') ?? play.become ?? false,
    ...(becomeUser !== undefined ? { becomeUser } : {}),
    environment,
    noLog: last('noLog') ?? false,
    ignoreErrors: last('ignoreErrors') ?? false,
    ignoreUnreachable: last('ignoreUnreachable') ?? false,
    ...(delegateTo !== undefined ? { delegateTo } : {}),
    runOnce: last('runOnce') ?? false,
    ...(timeout !== undefined ? { timeout } : {}),
    ...(resume !== undefined ? { resume } : {}),
    anyErrorsFatal: last('anyErrorsFatal') ?? play.anyErrorsFatal,
    // An include's `when` decides once whether to load the file; it is not re-checked per task.
    when: nodes.flatMap((n) => ((n as { kind?: string }).kind === 'include_tasks' ? [] : n.when)),
    tags: [...tags],
  };
}
