// The machine a BMC controls, as wait_agent compares it with the ramdisk's: the System's UUID
// and its NICs' MACs, read from the BMC itself (read-only) when no registered power result of
// this run carries them (a run started at a later tag, a resume).
import type { ModuleContext } from '../../module-api/types.js';
import { findSystem } from '../../redfish/discovery.js';
import { redfishClientFor } from '../../redfish/pool.js';
import { macAddresses } from '../../redfish/power.js';

export interface BmcIdentity {
  uuid?: string;
  macs: string[];
}

/** From the host's driver_info, or undefined when it names no BMC. */
export async function bmcIdentity(ctx: ModuleContext): Promise<BmcIdentity | undefined> {
  const di = ctx.vars.driver_info;
  if (!di || typeof di !== 'object' || (di as Record<string, unknown>).redfish_address === undefined) return undefined;
  const client = redfishClientFor(ctx, di);
  const system = await findSystem(client);
  const uuid = typeof system.body.UUID === 'string' && system.body.UUID ? system.body.UUID.toLowerCase() : undefined;
  return { ...(uuid ? { uuid } : {}), macs: await macAddresses(client, system) };
}
