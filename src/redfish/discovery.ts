// Discovery by following links only: service root → Systems → the System → its Manager
// (Links.ManagedBy) → VirtualMedia under the System or the Manager. Action targets come from
// `Actions[...].target`, allowed values from `@Redfish.AllowableValues` or `@Redfish.ActionInfo`.
import { TsbmError } from '../errors.js';
import type { RedfishClient, Resource } from './client.js';
import { collectionMembers } from './expand.js';
import { linkOf } from './links.js';
import { hpeOemMediaTargets, type OemMediaTargets } from './quirks/hpe-oem-virtual-media.js';
import type { Json } from './transport.js';

export { linkOf };

function members(coll: Json): string[] {
  return Array.isArray(coll.Members) ? coll.Members.map(linkOf).filter((x): x is string => x !== undefined) : [];
}

/** The System this client drives: `redfish_system_id` (an Id or a path), or the only one. */
export async function findSystem(client: RedfishClient): Promise<Resource> {
  return client.get(await client.remember('system path', () => findSystemPath(client)));
}

async function findSystemPath(client: RedfishClient): Promise<string> {
  const root = await client.serviceRoot();
  const systemsLink = linkOf(root.Systems);
  const bmc = client.endpoint.bmc;
  if (!systemsLink) throw new TsbmError('runtime', `BMC ${bmc} lists no Systems in its service root`, { hint: 'check that driver_info.redfish_address points at the BMC, not at another Redfish service' });
  const paths = members((await client.get(systemsLink)).body);
  const want = client.endpoint.systemId;
  let path: string | undefined;
  if (want) {
    path = paths.find((p) => p === want || p.replace(/\/+$/, '').split('/').pop() === want.replace(/^.*\//, ''));
    if (!path) {
      throw new TsbmError('runtime', `BMC ${bmc} has no System ${JSON.stringify(want)}; it has: ${paths.join(', ') || 'none'}`, {
        hint: 'set driver_info.redfish_system_id to one of the listed Systems',
      });
    }
  } else if (paths.length === 1) {
    path = paths[0];
  } else if (paths.length === 0) {
    throw new TsbmError('runtime', `BMC ${bmc} lists no Systems`, { hint: 'the BMC may still be starting; try again later' });
  } else {
    throw new TsbmError('runtime', `BMC ${bmc} manages several Systems: ${paths.join(', ')}`, {
      hint: 'set driver_info.redfish_system_id to the one this node is',
    });
  }
  if (!path) throw new Error('unreachable');
  return path;
}

/** The System's managers (Links.ManagedBy) that actually exist. */
async function findManagers(client: RedfishClient, system: Resource): Promise<Resource[]> {
  const links = system.body.Links as Json | undefined;
  const managedBy = Array.isArray(links?.ManagedBy) ? links.ManagedBy.map(linkOf).filter((x): x is string => !!x) : [];
  const out: Resource[] = [];
  for (const p of managedBy) {
    const m = await client.tryGet(p);
    if (m) out.push(m);
  }
  return out;
}

export interface ActionSpec {
  name: string;
  target: string;
  /** Parameter name → allowed values, from inline annotations and ActionInfo. */
  allowable: Record<string, string[]>;
}

/** An action of a resource (e.g. `#ComputerSystem.Reset`) with its allowed parameter values. */
export async function findAction(client: RedfishClient, resource: Json, name: string): Promise<ActionSpec | undefined> {
  const actions = resource.Actions as Json | undefined;
  const def = actions?.[name] as Json | undefined;
  if (!def || typeof def.target !== 'string') return undefined;
  const allowable: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(def)) {
    const m = /^(.+)@Redfish\.AllowableValues$/.exec(k);
    if (m?.[1] && Array.isArray(v)) allowable[m[1]] = v.map(String);
  }
  const infoPath = def['@Redfish.ActionInfo'];
  if (typeof infoPath === 'string') {
    const info = await client.tryGet(infoPath);
    const params = Array.isArray(info?.body.Parameters) ? (info.body.Parameters as Json[]) : [];
    for (const p of params) {
      if (typeof p.Name === 'string' && Array.isArray(p.AllowableValues)) {
        allowable[p.Name] = [...new Set([...(allowable[p.Name] ?? []), ...p.AllowableValues.map(String)])];
      }
    }
  }
  return { name, target: def.target, allowable };
}

export interface MediaSlot extends Resource {
  insert: ActionSpec | undefined;
  eject: ActionSpec | undefined;
  oem: OemMediaTargets;
}

const CD_TYPES = ['CD', 'DVD'];

/**
 * Picks the CD/DVD virtual media slot: by MediaTypes, else by an Id/Name that says CD/DVD.
 * Found once per client (one run); later calls read only that slot, for its current state.
 */
export async function findCdSlot(client: RedfishClient, system?: Resource): Promise<MediaSlot> {
  // The walk that finds the slot reads it too; later calls read only the slot (and need the
  // System only when no walk was made yet: an eject reads nothing else).
  let found: Resource | undefined;
  const path = await client.remember('cd slot', async () => {
    found = await discoverCdSlot(client, system ?? (await findSystem(client)));
    return found.path;
  });
  const pick = found ?? (await client.get(path));
  return {
    ...pick,
    insert: await findAction(client, pick.body, '#VirtualMedia.InsertMedia'),
    eject: await findAction(client, pick.body, '#VirtualMedia.EjectMedia'),
    oem: hpeOemMediaTargets(pick.body),
  };
}

/** Every virtual media slot of the System (under the System, else its Managers), and where it looked. */
async function listMediaSlots(client: RedfishClient, system: Resource): Promise<{ slots: Resource[]; looked: string[] }> {
  const looked: string[] = [];
  const collections: string[] = [];
  const sysLink = linkOf(system.body.VirtualMedia);
  if (sysLink) collections.push(sysLink);
  else looked.push(`System ${system.path} has no VirtualMedia link`);
  for (const m of await findManagers(client, system)) {
    const l = linkOf(m.body.VirtualMedia);
    if (l) collections.push(l);
    else looked.push(`Manager ${m.path} has no VirtualMedia link`);
  }
  const slots: Resource[] = [];
  for (const c of [...new Set(collections)]) {
    // One request where the BMC expands collections (the slots come with it).
    const bodies = await collectionMembers(client, c);
    if (!bodies) {
      looked.push(`${c} does not exist (404)`);
      continue;
    }
    for (const body of bodies) {
      const path = linkOf(body);
      const etag = body['@odata.etag'];
      if (path) slots.push({ path, body, etag: typeof etag === 'string' ? etag : undefined });
    }
    if (slots.length) break;
  }
  return { slots, looked };
}

const mediaTypes = (s: Resource) => (Array.isArray(s.body.MediaTypes) ? s.body.MediaTypes.map(String) : []);

async function discoverCdSlot(client: RedfishClient, system: Resource): Promise<Resource> {
  const bmc = client.endpoint.bmc;
  const { slots, looked } = await listMediaSlots(client, system);
  const types = mediaTypes;
  const named = (s: Resource) => /cd|dvd/i.test(`${String(s.body.Id ?? '')} ${String(s.body.Name ?? '')} ${s.path}`);
  const pick =
    slots.find((s) => types(s).some((t) => CD_TYPES.includes(t))) ??
    slots.find((s) => types(s).length === 0 && named(s)) ??
    slots.find((s) => named(s));
  if (!pick) {
    const why = slots.length ? `its virtual media slots (${slots.map((s) => s.path).join(', ')}) take no CD/DVD` : looked.join('; ');
    throw new TsbmError('runtime', `BMC ${bmc} offers no CD/DVD virtual media for System ${system.path}: ${why}`, {
      hint: 'this BMC cannot boot an ISO over Redfish virtual media; enable/license virtual media on the BMC, or boot the ramdisk over the network (redfish_boot_device device: pxe)',
    });
  }
  return pick;
}

/**
 * A virtual media slot other than the boot CD that can carry a small ISO volume (the kickstart's
 * OEMDRV): another CD/DVD slot first, else a USB stick slot (as HPE iLO's slot 1). Floppy-only
 * slots are not used. Undefined when the BMC has none; `others` names the slots it has.
 */
export async function findSecondSlot(client: RedfishClient, system: Resource): Promise<{ slot: MediaSlot | undefined; others: string[] }> {
  const cd = await findCdSlot(client, system);
  let others: Resource[] | undefined;
  const path = await client.remember('second media slot', async () => {
    const { slots } = await listMediaSlots(client, system);
    others = slots.filter((s) => s.path !== cd.path);
    const rank = (s: Resource) => {
      const t = mediaTypes(s);
      if (t.includes('CD') || t.includes('DVD')) return 0;
      if (t.includes('USBStick')) return 1;
      return t.length === 0 ? 2 : 3;
    };
    const usable = others.filter((s) => rank(s) < 3).sort((a, b) => rank(a) - rank(b));
    return usable[0]?.path ?? `none:${others.map((s) => `${s.path} (${mediaTypes(s).join('/') || 'no MediaTypes'})`).join(', ')}`;
  });
  if (path.startsWith('none:')) {
    const listed = path.slice(5);
    return { slot: undefined, others: listed ? listed.split(', ') : [] };
  }
  const pick = others?.find((s) => s.path === path) ?? (await client.get(path));
  return {
    slot: {
      ...pick,
      insert: await findAction(client, pick.body, '#VirtualMedia.InsertMedia'),
      eject: await findAction(client, pick.body, '#VirtualMedia.EjectMedia'),
      oem: hpeOemMediaTargets(pick.body),
    },
    others: [],
  };
}
