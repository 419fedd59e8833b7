// The BMC part of the deploy preflight: log in, find the node's System and the virtual CD the
// deploy will boot from. Through the run's pooled client, so later tasks reuse the session and
// the discovery (nothing is asked twice).
import type { RedfishClient } from '../redfish/client.js';
import { findCdSlot, findSystem } from '../redfish/discovery.js';
import { powerStateOf } from '../redfish/power.js';

export async function checkBmcReady(client: RedfishClient, needsMedia: boolean): Promise<string> {
  const system = await findSystem(client);
  const slot = needsMedia ? await findCdSlot(client, system) : undefined;
  client.log(`BMC ${client.endpoint.bmc}: ${client.authKind} login, System ${system.path}${slot ? `, virtual CD ${slot.path}` : ''}`, 2);
  return `BMC ${client.endpoint.bmc}: System ${system.path} (${powerStateOf(system)})${slot ? ', virtual CD' : ''}`;
}
