// Which machine a host is, for its node lock: the BMC address of its driver_info, else its SSH
// address, else (run on the controller) its name. Read from the vars a play's tasks see before
// any task ran (inventory, play vars, vars_files, facts restored by --resume, extra vars),
// rendered leniently: a value that cannot be rendered yet falls through to the next identity.
import { bmcLockKey, type LockTarget, localLockKey, sshLockKey } from '../journal/node-key.js';
import type { Play } from '../playbook/model.js';
import type { Vars } from '../types.js';
import { asData } from '../util/unsafe-text.js';
import { lazyVars } from './lazy-vars.js';
import type { RunRuntime } from './play-runtime.js';
import { inventoryVars } from './task-vars.js';
import { composeVars } from './vars.js';

export function playLevelVars(rt: RunRuntime, play: Play, host: string): { vars: Vars; raw: Vars } {
  const raw = composeVars({
    inventory: inventoryVars(rt, host),
    play: play.vars,
    varsFiles: play.varsFiles,
    blocks: [],
    task: {},
    facts: rt.state.host(host).facts,
    extra: rt.extraVars,
    magic: { ...rt.inventory.magicFor(host), inventory_hostname: asData(host), playbook_dir: rt.playbookDir },
  });
  return { vars: lazyVars(raw, { host, baseDir: play.baseDir, onSecret: (v) => rt.redactor.add(v) }, { lenient: true }), raw };
}

function nodeKey(rt: RunRuntime, play: Play, host: string): string {
  const { vars, raw } = playLevelVars(rt, play, host);
  let di: unknown;
  try {
    di = vars.driver_info;
  } catch {
    // A password whose env var is unset fails the host's first BMC task; its address is still its identity.
    di = raw.driver_info;
  }
  const address = di && typeof di === 'object' ? (di as Record<string, unknown>).redfish_address : undefined;
  const bmc = typeof address === 'string' && !address.includes('{{') ? bmcLockKey(address) : undefined;
  if (bmc) return bmc;
  try {
    const spec = rt.inventory.connectionSpec(host, vars);
    return spec.connection === 'local' ? localLockKey(host) : sshLockKey(spec.address, spec.port);
  } catch {
    // Bad connection vars fail the host's first task with a clear message; lock its name meanwhile.
    return localLockKey(host);
  }
}

export function lockTargets(rt: RunRuntime, play: Play, hosts: readonly string[]): LockTarget[] {
  return hosts.map((host) => ({ host, key: nodeKey(rt, play, host) }));
}
