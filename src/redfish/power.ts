// Power control decisions: which ResetType the BMC allows for a wanted operation, the Reset
// action itself (iDRAC's redundant-power 409 treated as done), PowerState and identity reads.
import { TsbmError } from '../errors.js';
import type { RedfishClient, Resource } from './client.js';
import { type ActionSpec, findAction, linkOf } from './discovery.js';
import { RedfishError } from './errors.js';
import type { PowerRequest } from './module-args.js';
import { collectionMembers } from './expand.js';
import { isRedundantPowerConflict } from './quirks/idrac-redundant-power.js';
import { repairResetTypes } from './quirks/supermicro-reset-types.js';


/** ResetTypes in order of preference for each request. */
const PREFERENCES: Record<PowerRequest, string[]> = {
  on: ['On', 'ForceOn', 'PushPowerButton'],
  off: ['ForceOff'],
  graceful_off: ['GracefulShutdown', 'ForceOff'],
  restart: ['ForceRestart', 'PowerCycle', 'GracefulRestart'],
  graceful_restart: ['GracefulRestart', 'ForceRestart', 'PowerCycle'],
  cycle: ['PowerCycle', 'ForceRestart'],
  nmi: ['Nmi'],
};

export interface ResetChoice {
  type: string;
  /** True when the first preference was not offered (e.g. ForceOff for graceful_off). */
  fallback: boolean;
}

/** Picks a ResetType; `allowed` undefined means the BMC did not say (try the first preference). */
export function chooseResetType(req: PowerRequest, allowed: readonly string[] | undefined): ResetChoice | undefined {
  const prefs = PREFERENCES[req];
  if (!allowed || allowed.length === 0) return { type: prefs[0] as string, fallback: false };
  const i = prefs.findIndex((p) => allowed.includes(p));
  return i < 0 ? undefined : { type: prefs[i] as string, fallback: i > 0 };
}

export interface ResetAction {
  target: string;
  allowed: string[] | undefined;
}

export async function resetAction(client: RedfishClient, system: Resource): Promise<ResetAction> {
  const spec: ActionSpec | undefined = await findAction(client, system.body, '#ComputerSystem.Reset');
  if (!spec) {
    throw new TsbmError('runtime', `BMC ${client.endpoint.bmc}: System ${system.path} offers no #ComputerSystem.Reset action, so its power cannot be controlled over Redfish`, {
      hint: 'update the BMC firmware, or check that redfish_system_id names the computer system and not another resource',
    });
  }
  const raw = spec.allowable.ResetType;
  return { target: spec.target, allowed: raw ? repairResetTypes(raw) : undefined };
}

/** POSTs the reset; returns false when the BMC said the node already was in that state. */
export async function postReset(client: RedfishClient, action: ResetAction, type: string): Promise<boolean> {
  try {
    await client.post(action.target, { ResetType: type });
    return true;
  } catch (e) {
    if (e instanceof RedfishError && isRedundantPowerConflict(e, type)) {
      client.log(`BMC ${client.endpoint.bmc} answered 409 to ${type}: already in that state`, 2);
      return false;
    }
    throw e;
  }
}

export function powerStateOf(system: Resource): string {
  return typeof system.body.PowerState === 'string' ? system.body.PowerState : 'Unknown';
}

/**
 * MAC addresses of the System's EthernetInterfaces, lowercased; empty when the BMC lists none.
 * Read once per run and BMC: a deploy reports them after every power change. One request
 * where the BMC expands the collection (`$expand`), else one per NIC plus the collection.
 */
export async function macAddresses(client: RedfishClient, system: Resource): Promise<string[]> {
  const link = linkOf(system.body.EthernetInterfaces);
  if (!link) return [];
  return [...(await client.remember(`macs ${link}`, () => readMacs(client, link)))];
}

async function readMacs(client: RedfishClient, link: string): Promise<string[]> {
  const nics = await collectionMembers(client, link);
  const macs = new Set<string>();
  for (const b of nics ?? []) {
    for (const v of [b.MACAddress, b.PermanentMACAddress]) {
      if (typeof v === 'string' && /^([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$/i.test(v)) {
        macs.add(v.toLowerCase().replace(/-/g, ':'));
        break;
      }
    }
  }
  return [...macs];
}
