// --resume and `resume: rerun`: a task marked rerun (power on, wait for the ramdisk, attach a
// kickstart) runs again only when the host still has unfinished work after it that depends on
// what it set up: a task on its target (the ramdisk it booted), or a task whose module says
// `needsRunState` (anaconda_wait: the installer calls back with the token and to the server of
// the run that attached its kickstart, both gone with a killed run). A host that got past every
// such step (say it was killed during the finish steps) must not wait for a ramdisk that is
// gone nor reinstall; a host killed during the install must reconnect and re-check identity
// first, and one killed while its installer ran must boot it again with a fresh kickstart.
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

/** Whether `t` needs what the tasks before it set up in the same run (see the file comment). */
function needsSetup(t: Task, moduleOf: (name: string) => ModuleDef | undefined): boolean {
  const mod = moduleOf(t.module);
  return (mod?.runsOn === 'target' && t.delegateTo === undefined) || mod?.needsRunState === true;
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
  return list.slice(at + 1).some((t) => needsSetup(t, moduleOf) && !completed(host, t.id));
}
