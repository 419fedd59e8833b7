// --resume and `resume: rerun`: a task marked rerun (power on, wait for the ramdisk) runs again
// only when the host still has unfinished work on its target after it. A host that got past
// every ramdisk step (say it was killed during the finish steps) must not wait for a ramdisk
// that is gone; a host killed during the install must reconnect and re-check identity first.
import type { ModuleDef } from '../module-api/types.js';
import type { Play, Task } from '../playbook/model.js';
import { playNodes, staticTasks } from '../playbook/static-tasks.js';

const flatCache = new WeakMap<Play, Task[]>();

function tasksOf(play: Play): Task[] {
  let list = flatCache.get(play);
  if (!list) {
    list = staticTasks(playNodes(play));
    flatCache.set(play, list);
  }
  return list;
}

export function rerunNeeded(
  play: Play,
  task: Task,
  host: string,
  completed: (host: string, taskId: string) => boolean,
  moduleOf: (name: string) => ModuleDef | undefined,
): boolean {
  const list = tasksOf(play);
  const at = list.indexOf(task);
  if (at < 0) return true; // not statically known (an include): be safe
  return list.slice(at + 1).some((t) => {
    const onTarget = moduleOf(t.module)?.runsOn === 'target' && t.delegateTo === undefined;
    return onTarget && !completed(host, t.id);
  });
}
