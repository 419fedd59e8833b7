// rerunNeeded: on --resume, a `resume: rerun` task runs again only while the host has unfinished
// work after it that depends on what it set up: a task on the target, or a task whose module
// says needsRunState (its wait depends on per-run state, such as anaconda_wait's callback token).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rerunNeeded } from '../../src/executor/resume-plan.js';
import type { ModuleDef } from '../../src/module-api/types.js';
import { getModule } from '../../src/modules/registry.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import { playNodes, staticTasks } from '../../src/playbook/static-tasks.js';
import { play, task } from '../helpers/executor-model.js';

/** Module definitions by name: only runsOn and needsRunState matter to rerunNeeded. */
function modules(defs: Record<string, Pick<ModuleDef, 'runsOn' | 'needsRunState'>>) {
  return (name: string) => (defs[name] ? ({ name, ...defs[name] } as unknown as ModuleDef) : undefined);
}

const mods = modules({
  boot: { runsOn: 'controller' },
  wait: { runsOn: 'controller', needsRunState: true },
  eject: { runsOn: 'controller' },
  install: { runsOn: 'target' },
});

describe('rerunNeeded', () => {
  const boot = task('boot', {}, { resume: 'rerun' });
  const wait = task('wait');
  const eject = task('eject');
  const p = play([boot, wait, eject]);
  const doneUpTo = (last: number) => (_h: string, id: string) => [boot, wait, eject].slice(0, last + 1).some((t) => t.id === id);

  it('a later unfinished task whose module needs per-run state makes it run again', () => {
    expect(rerunNeeded(p, boot, 'a', doneUpTo(0), mods)).toBe(true);
  });

  it('once that task completed, only controller work without per-run state is left: skipped', () => {
    expect(rerunNeeded(p, boot, 'a', doneUpTo(1), mods)).toBe(false);
    expect(rerunNeeded(p, boot, 'a', doneUpTo(2), mods)).toBe(false);
  });

  it('per host: the host whose wait did not finish reruns, the other does not', () => {
    const completed = (h: string, id: string) => id === boot.id || (h === 'b' && id === wait.id);
    expect(rerunNeeded(p, boot, 'a', completed, mods)).toBe(true);
    expect(rerunNeeded(p, boot, 'b', completed, mods)).toBe(false);
  });

  it('unfinished target work still counts, delegated target work and plain controller work do not', () => {
    const on = task('boot', {}, { resume: 'rerun' });
    const install = task('install');
    const delegated = task('install', {}, { delegateTo: 'localhost' });
    const ctl = task('eject');
    const onlyOn = (_h: string, id: string) => id === on.id;
    expect(rerunNeeded(play([on, install]), on, 'a', onlyOn, mods)).toBe(true);
    expect(rerunNeeded(play([on, delegated, ctl]), on, 'a', onlyOn, mods)).toBe(false);
  });

  it('work before the task does not count', () => {
    const w = task('wait');
    const b = task('boot', {}, { resume: 'rerun' });
    expect(rerunNeeded(play([w, b]), b, 'a', (_h, id) => id === b.id, mods)).toBe(false);
  });
});

describe('rerunNeeded on deploy-anaconda.yml with the real modules', () => {
  const pb = loadPlaybook(path.resolve(import.meta.dirname, '../../playbooks/deploy-anaconda.yml'));
  const pl = pb.plays[0]!;
  const all = staticTasks(playNodes(pl));
  const waitAt = all.findIndex((t) => t.module === 'anaconda_wait');
  const rerun = all.filter((t) => t.resume === 'rerun');
  const doneBefore = (n: number) => (_h: string, id: string) => all.slice(0, n).some((t) => t.id === id);

  it('anaconda_wait says needsRunState; the installer-boot steps before it say resume: rerun', () => {
    expect(getModule('anaconda_wait')?.needsRunState).toBe(true);
    expect(rerun.map((t) => `${t.module}${t.args.state ? `:${String(t.args.state)}` : ''}`)).toEqual([
      'redfish_power:off',
      'kickstart_media',
      'installer_boot',
      'vmedia_boot:inserted',
      'redfish_power:on',
    ]);
    for (const t of rerun) expect(all.indexOf(t)).toBeLessThan(waitAt);
  });

  it('a node stopped while its installer ran (the wait unfinished) boots it again from the power-off', () => {
    for (const t of rerun) expect(rerunNeeded(pl, t, 'node01', doneBefore(waitAt), getModule), t.name).toBe(true);
  });

  it('a node stopped during the finish steps (the wait done) reruns none of them', () => {
    for (let n = waitAt + 1; n <= all.length; n++) {
      for (const t of rerun) expect(rerunNeeded(pl, t, 'node02', doneBefore(n), getModule), `${t.name} with ${n} done`).toBe(false);
    }
  });
});
