// Builds the raw (unrendered) vars one task sees on one host, from the precedence layers.
import type { Task, TaskKeywords } from '../playbook/model.js';
import type { Vars } from '../types.js';
import { asData } from '../util/unsafe-text.js';
import type { PlayRuntime, RunRuntime } from './play-runtime.js';
import { composeVars, hostvarsView, roleOf } from './vars.js';

export function inventoryVars(rt: RunRuntime, host: string): Vars {
  let v = rt.invVars.get(host);
  if (!v) {
    v = rt.inventory.varsFor(host);
    rt.redactor.addFromVars(v);
    rt.invVars.set(host, v);
  }
  return v;
}

function magic(rt: RunRuntime, host: string, playHosts: string[]): Vars {
  return {
    ...rt.inventory.magicFor(host),
    inventory_hostname: asData(host),
    hostvars: hostvarsView({
      hosts: () => rt.inventory.names(),
      varsOf: (h) => hostVars(rt, h),
    }),
    playbook_dir: rt.playbookDir,
    tsbm_check_mode: rt.check,
    ansible_check_mode: rt.check,
    tsbm_verbosity: rt.verbosity,
    ansible_play_hosts: playHosts,
    play_hosts: playHosts,
    ...(rt.state.host(host).node ? { tsbm_node: rt.state.host(host).node } : {}),
    tsbm_rebuild: rt.rebuild,
  };
}

/** Magic vars are the same for every task of a play on a host: built once. */
function playMagic(pr: PlayRuntime, host: string): Vars {
  let m = pr.magic.get(host);
  if (!m) {
    m = magic(pr, host, pr.playHosts);
    pr.magic.set(host, m);
  }
  return m;
}

/** What `hostvars[h]` shows: inventory vars, facts, extra vars and magic vars (no play scope). */
export function hostVars(rt: RunRuntime, host: string): Vars {
  return composeVars({
    inventory: inventoryVars(rt, host),
    play: {},
    varsFiles: [],
    blocks: [],
    task: {},
    facts: rt.state.host(host).facts,
    extra: rt.extraVars,
    magic: { ...rt.inventory.magicFor(host), inventory_hostname: asData(host) },
  });
}

/** What a play's own keywords see on a host: no role, block or task scope. */
export function playVars(pr: PlayRuntime, host: string): Vars {
  return composeVars({
    inventory: inventoryVars(pr, host),
    play: pr.play.vars,
    varsFiles: pr.play.varsFiles,
    blocks: [],
    task: {},
    facts: pr.state.host(host).facts,
    extra: pr.extraVars,
    magic: playMagic(pr, host),
  });
}

export function taskVars(pr: PlayRuntime, host: string, chain: readonly TaskKeywords[], task: Task | TaskKeywords): Vars {
  const role = roleOf(chain, task);
  for (const n of chain) rtSecrets(pr, n.vars);
  rtSecrets(pr, task.vars);
  if (role) {
    rtSecrets(pr, role.defaults);
    rtSecrets(pr, role.vars);
  }
  return composeVars({
    ...(role ? { roleDefaults: role.defaults, roleVars: role.vars } : {}),
    inventory: inventoryVars(pr, host),
    play: pr.play.vars,
    varsFiles: pr.play.varsFiles,
    blocks: chain.map((n) => n.vars),
    task: task.vars,
    facts: pr.state.host(host).facts,
    extra: pr.extraVars,
    magic: playMagic(pr, host),
  });
}

// Each vars object is scanned for secret-named values once per run (many tasks share it).
function rtSecrets(rt: RunRuntime, v: Vars): void {
  if (rt.scanned.has(v)) return;
  rt.scanned.add(v);
  rt.redactor.addFromVars(v);
}
