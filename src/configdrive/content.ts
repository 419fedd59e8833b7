// What goes on a config drive built from a dict (Ironic's `instance_info.configdrive` dict form):
// the OpenStack metadata layout cloud-init and Ignition read, under both version directories.
import { createHash } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { getPath } from '../inventory/node-data.js';
import type { Vars } from '../types.js';
import { type IsoFileInput, buildIso } from './iso9660.js';

const CONFIG_DRIVE_LABEL = 'config-2';
/** The partition is 64 MiB, and Ironic refuses larger images too. */
export const MAX_CONFIGDRIVE_BYTES = 64 * 1024 * 1024;
const VERSION_DIRS = ['openstack/2012-08-10', 'openstack/latest'] as const;
/** Fixed so the same content gives the same bytes (and a rerun can see nothing changed). */
const ISO_DATE = new Date('2000-01-01T00:00:00Z');

const Json = Type.Unknown();
export const configDriveDictSchema = Type.Object(
  {
    meta_data: Type.Optional(
      Type.Record(Type.String(), Json, {
        description: 'meta_data.json; uuid and name default from the node',
      }),
    ),
    network_data: Type.Optional(
      Type.Record(Type.String(), Json, { description: 'network_data.json (links, networks, services)' }),
    ),
    user_data: Type.Optional(
      Type.Union([Type.String(), Type.Record(Type.String(), Json), Type.Array(Json)], {
        description: 'user_data: a string is written as is, an object or list as JSON (as Ironic does)',
      }),
    ),
    vendor_data: Type.Optional(Type.Record(Type.String(), Json, { description: 'vendor_data2.json' })),
  },
  { additionalProperties: false },
);
export type ConfigDriveDict = Static<typeof configDriveDictSchema>;

export interface NodeIdentity {
  name: string;
  uuid: string;
}

/** A name-based (v5-style) UUID, so a node without one still gets the same id on every run. */
export function stableUuid(name: string): string {
  const h = createHash('sha1').update(`tsbm-configdrive:${name}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** Node name and UUID from host vars: Ironic's `uuid`, then `system_uuid`, then a stable generated one. */
export function nodeIdentity(vars: Vars): NodeIdentity {
  const name = String(vars.inventory_hostname ?? vars.name ?? 'node');
  const uuid = [vars.uuid, vars.system_uuid, getPath(vars, 'properties.system_uuid')].find(
    (v): v is string => typeof v === 'string' && v !== '',
  );
  return { name, uuid: uuid ?? stableUuid(name) };
}

const json = (v: unknown) => Buffer.from(`${JSON.stringify(v, null, 2)}\n`);

/** The file set for a dict config drive, with meta_data's uuid/name defaulted from the node. */
export function configDriveFiles(cd: ConfigDriveDict, node: NodeIdentity): IsoFileInput[] {
  const meta = { uuid: node.uuid, name: node.name, ...(cd.meta_data ?? {}) };
  const entries: [string, Buffer][] = [['meta_data.json', json(meta)]];
  if (cd.network_data !== undefined) entries.push(['network_data.json', json(cd.network_data)]);
  if (cd.user_data !== undefined) {
    const ud =
      typeof cd.user_data === 'string'
        ? Buffer.from(cd.user_data)
        : Buffer.from(JSON.stringify(cd.user_data));
    entries.push(['user_data', ud]);
  }
  if (cd.vendor_data !== undefined) entries.push(['vendor_data2.json', json(cd.vendor_data)]);
  return VERSION_DIRS.flatMap((dir) => entries.map(([name, data]) => ({ path: `${dir}/${name}`, data })));
}

export function buildConfigDriveIso(cd: ConfigDriveDict, node: NodeIdentity): Buffer {
  return buildIso(configDriveFiles(cd, node), {
    volumeId: CONFIG_DRIVE_LABEL,
    date: ISO_DATE,
    publisher: 'tsbm',
  });
}
