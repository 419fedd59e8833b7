// --start-at-task: the tasks of a play that come before the named one (in tree order) are
// skipped. Matching is by task name, exact or as a `*` glob.
import type { Play, Task, TaskNode } from '../playbook/model.js';

export function matchesName(name: string | undefined, pattern: string): boolean {
  if (name === undefined) return false;
  if (!pattern.includes('*')) return name === pattern;
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(name);
}

/** Tasks to skip, and whether the start task was found in this play. */
export function tasksBefore(play: Play, pattern: string): { skip: Set<Task>; found: boolean } {
  const skip = new Set<Task>();
  let found = false;
  const visit = (nodes: readonly TaskNode[]) => {
    for (const n of nodes) {
      if (found) return;
      if (n.kind === 'task') {
        if (matchesName(n.name, pattern)) found = true;
        else skip.add(n);
      } else if (n.kind === 'block') {
        visit(n.block);
        visit(n.rescue);
        visit(n.always);
      }
    }
  };
  visit([...play.preTasks, ...play.roleTasks, ...play.tasks, ...play.postTasks]);
  return { skip, found };
}
