// The BMC part of the deploy preflight: log in, find the node's System and the virtual CD the
// deploy will boot from. Through the run's pooled client, so later tasks reuse the session and
// the discovery (nothing is asked twice).
import type { RedfishClient } from '../../redfish/client.js';
import { TsbmError } from '../../errors.js';
import { findCdSlot, findSecondSlot, findSystem } from '../../redfish/discovery.js';
import { powerStateOf } from '../../redfish/power.js';

/** `secondSlot`: an anaconda deploy's kickstart volume needs another slot besides the CD. */
export async function checkBmcReady(client: RedfishClient, needsMedia: boolean, secondSlot = false): Promise<string> {
  const system = await findSystem(client);
  const slot = needsMedia ? await findCdSlot(client, system) : undefined;
  let second = '';
  if (secondSlot) {
    const found = await findSecondSlot(client, system);
    if (!found.slot) {
      throw new TsbmError('runtime', `BMC ${client.endpoint.bmc} has one virtual media slot for ISOs (${slot?.path ?? 'the CD'}${found.others.length ? `; the others take no CD or USB stick: ${found.others.join(', ')}` : ''}); the kickstart's OEMDRV volume needs a second`, {
        hint: 'boot an installer ISO whose boot configuration carries inst.ks=URL and set instance_info.ks_url to that URL on tsbm_http_address, or use a BMC with a second CD/DVD or USB virtual media slot',
      });
    }
    second = `, kickstart slot ${found.slot.path}`;
  }
  client.log(`BMC ${client.endpoint.bmc}: ${client.authKind} login, System ${system.path}${slot ? `, virtual CD ${slot.path}` : ''}${second}`, 2);
  return `BMC ${client.endpoint.bmc}: System ${system.path} (${powerStateOf(system)})${slot ? ', virtual CD' : ''}${second ? ', second slot for the kickstart' : ''}`;
}
