// Check mode never powers a node on or boots it: before wait_agent tries to reach a ramdisk in
// check mode, this says whether one can be up at all. When it cannot, the ramdisk steps after
// it are reported as what they would do after boot instead of failing "unreachable".
import type { ModuleContext } from '../../module-api/types.js';
import { findSystem } from '../../redfish/discovery.js';
import { redfishClientFor } from '../../redfish/pool.js';
import { powerStateOf } from '../../redfish/power.js';

const NOT_BOOTED = 'check mode boots nothing';

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Why no ramdisk can be up now, or undefined when one may be (the node is On): from the
 * registered power result of this run (a check-mode power-on that would act; PowerState Off),
 * else from the BMC itself (read-only). No BMC known: undefined (wait_agent then tries SSH).
 */
export async function notBootedReason(ctx: ModuleContext, powerResult: unknown): Promise<string | undefined> {
  if (isMap(powerResult) && (powerResult.changed === true || typeof powerResult.power_state === 'string')) {
    const state = typeof powerResult.power_state === 'string' ? powerResult.power_state : undefined;
    const reset = typeof powerResult.reset_type === 'string' ? powerResult.reset_type : undefined;
    if (powerResult.changed === true) {
      const act = reset === 'On' || reset === 'ForceOn' ? 'power the node on' : `reset the node (${reset ?? 'power change'})`;
      return `the run would ${act} first${state ? `, PowerState ${state} now` : ''}; ${NOT_BOOTED}`;
    }
    if (state === 'Off') return `the node is Off; ${NOT_BOOTED}`;
    return undefined;
  }
  const di = ctx.vars.driver_info;
  if (!isMap(di) || di.redfish_address === undefined) return undefined;
  const state = powerStateOf(await findSystem(redfishClientFor(ctx, di)));
  return state === 'Off' ? `the node is Off; ${NOT_BOOTED}` : undefined;
}
