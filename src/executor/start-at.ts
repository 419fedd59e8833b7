// --start-at-task: the tasks of a play that come before the named one (in tree order) are
// skipped. Matching is by task name, exact or as a `*` glob.
import type { Play, Task } from '../playbook/model.js';
import { playNodes, staticTasks } from '../playbook/static-tasks.js';

export function matchesName(name: string | undefined, pattern: string): boolean {
  if (name === undefined) return false;
  if (!pattern.includes('*')) return name === pattern;
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(name);
}

/** Tasks to skip, and whether the start task was found in this play. */
export function tasksBefore(play: Play, pattern: string): { skip: Set<Task>; found: boolean } {
  const list = staticTasks(playNodes(play));
  const at = list.findIndex((t) => matchesName(t.name, pattern));
  return { skip: new Set(at < 0 ? list : list.slice(0, at)), found: at >= 0 };
}
