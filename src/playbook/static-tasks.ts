// The tasks a play holds statically, in tree order (block, rescue, always). include_tasks content
// is only known at run time and is not part of it.
import type { Play, Task, TaskNode } from './model.js';

export function staticTasks(nodes: readonly TaskNode[]): Task[] {
  return nodes.flatMap((n) =>
    n.kind === 'task' ? [n] : n.kind === 'block' ? staticTasks([...n.block, ...n.rescue, ...n.always]) : [],
  );
}

/** pre_tasks, role tasks, tasks, post_tasks, in the order a play runs them. */
export function playNodes(play: Play): TaskNode[] {
  return [...play.preTasks, ...play.roleTasks, ...play.tasks, ...play.postTasks];
}

/** Every tag written in a play: its own, its roles', blocks', tasks' and includes' (not inside included files). */
export function playTags(play: Play): Set<string> {
  const out = new Set(play.tags);
  const walk = (nodes: readonly TaskNode[]): void => {
    for (const n of nodes) {
      for (const t of n.tags) out.add(t);
      if (n.kind === 'block') walk([...n.block, ...n.rescue, ...n.always]);
    }
  };
  walk(playNodes(play));
  for (const h of play.handlers) for (const t of h.tags) out.add(t);
  return out;
}
