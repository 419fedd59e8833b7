// A play that declares `provision:` (deploy, undeploy) asks the run about each node before any
// task: what the play's variables say of it (protected, rebuild, the image, the System), and
// whether the run admits it. A refused host fails at once with the run's message, nothing on it
// touched; the others see their node record as `tsbm_node`.
import { truthy } from '../inventory/node-data.js';
import type { LockTarget } from '../journal/node-key.js';
import type { Play } from '../playbook/model.js';
import type { Vars } from '../types.js';
import type { NodeFacts } from './deps.js';
import { playLevelVars } from './node-identity.js';
import type { RunRuntime } from './play-runtime.js';
import { failedResult } from './result.js';

/** The task the refusals are reported under (no module runs). */
const ADMIT_TASK = { id: 'tsbm:node-state', name: "Check the node's record (provision state, protected)" };

function read(vars: Vars, raw: Vars, get: (v: Vars) => unknown): unknown {
  try {
    return get(vars);
  } catch {
    // a value that cannot be rendered yet (a password from an unset env var): the raw one
    return get(raw);
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() !== '' && !v.includes('{{') ? v : undefined);
const at = (v: unknown, k: string): unknown => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined);

export function nodeFactsOf(rt: RunRuntime, play: Play, target: LockTarget, rebuild: boolean): NodeFacts {
  const { vars, raw } = playLevelVars(rt, play, target.host);
  const get = (f: (v: Vars) => unknown) => read(vars, raw, f);
  const image =
    str(get((v) => at(v.instance_info, 'image_source'))) ??
    str(get((v) => v.instance_iso)) ??
    str(get((v) => at(v.instance_info, 'boot_iso'))) ??
    str(get((v) => v.installer_iso));
  const system = str(get((v) => at(v.driver_info, 'redfish_system_id')));
  const declared = str(get((v) => v.provision_state));
  const reason = str(get((v) => v.protected_reason));
  return {
    host: target.host,
    key: target.key,
    ...(system ? { system } : {}),
    protected: truthy(get((v) => v.protected)),
    ...(reason ? { protectedReason: reason } : {}),
    ...(declared ? { declaredState: declared } : {}),
    rebuild: rebuild || truthy(get((v) => v.rebuild)),
    ...(image ? { image } : {}),
    onFailure: str(get((v) => v.on_deploy_failure)) ?? 'power_off',
  };
}

/** Asks the run about a provisioning play's hosts; returns the hosts it admitted. */
export async function admitHosts(rt: RunRuntime, play: Play, targets: readonly LockTarget[], opts: { partial: boolean; rebuild: boolean }): Promise<string[]> {
  const facts = targets.map((t) => nodeFactsOf(rt, play, t, opts.rebuild));
  for (const f of facts) rt.nodeFacts.set(f.host, f);
  if (!play.provision || !rt.deps.hooks?.admit) return targets.map((t) => t.host);
  const answers = await rt.deps.hooks.admit({ name: play.name, provision: play.provision, partial: opts.partial, check: rt.check }, facts);
  const admitted: string[] = [];
  let announced = false;
  for (const f of facts) {
    const a = answers.get(f.host);
    if (a?.node) rt.state.host(f.host).node = a.node;
    if (a?.refused === undefined) {
      admitted.push(f.host);
      continue;
    }
    if (!announced) {
      announced = true;
      rt.bus.emit({ type: 'task_start', time: Date.now(), play: play.name, task: ADMIT_TASK.name, taskId: ADMIT_TASK.id, module: 'tsbm' });
    }
    const reg = failedResult(a.refused);
    rt.bus.emit({
      type: 'host_result',
      time: Date.now(),
      host: f.host,
      task: ADMIT_TASK.name,
      taskId: ADMIT_TASK.id,
      status: 'failed',
      changed: false,
      msg: a.refused,
      result: reg,
      durationMs: 0,
      counts: { failed: 1 },
    });
    const hs = rt.state.host(f.host);
    hs.stats.failed++;
    rt.state.fell(f.host, 'failed', { task: ADMIT_TASK.name, msg: a.refused });
  }
  return admitted;
}
