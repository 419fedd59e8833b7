// The work of `tsbm nodes ...`: open the node store the setting names, read or edit records.
import { optionsError, TsbmError } from '../errors.js';
import { bmcLockKey } from '../journal/node-key.js';
import { formatNodeList, formatNodeShow } from '../nodes/format.js';
import { openNodeStore } from '../nodes/open.js';
import { freshRecord } from '../nodes/record.js';
import { type NodeRecord, type NodeStore, PROVISION_STATES, type ProvisionState } from '../nodes/types.js';
import { storeSettingOf } from './node-store-setting.js';

interface StoreFlags {
  state?: string;
  lockDir?: string;
}

async function withStore<T>(flags: StoreFlags, use: (store: NodeStore) => Promise<T>): Promise<T> {
  const store = await openNodeStore(storeSettingOf(flags));
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

const KEY = /^(bmc|ssh|local):/;

/** The record NODE names (its key, its inventory name, or its BMC's address); `undefined` with the key to create it under. */
async function find(store: NodeStore, node: string): Promise<{ record?: NodeRecord; key?: string }> {
  if (KEY.test(node)) return { key: node, ...(await store.get(node).then((r) => (r ? { record: r } : {}))) };
  const byName = (await store.list()).filter((r) => r.name === node);
  if (byName.length === 1) return { record: byName[0]!, key: byName[0]!.key };
  if (byName.length > 1) {
    throw new TsbmError('runtime', `${byName.length} node records are named ${node}: ${byName.map((r) => r.key).join(', ')}`, {
      hint: 'name the node by its key',
    });
  }
  const bmc = /^https?:\/\//i.test(node) ? bmcLockKey(node) : undefined;
  if (bmc) return { key: bmc, ...(await store.get(bmc).then((r) => (r ? { record: r } : {}))) };
  return {};
}

/** Like find(), but a node with neither a record nor a key is refused. */
async function found(store: NodeStore, node: string): Promise<{ record?: NodeRecord; key: string }> {
  const { record, key } = await find(store, node);
  if (!key) {
    throw new TsbmError('runtime', `no node record for ${node} in ${store.where}`, {
      hint: 'name a node tsbm has a record of (tsbm nodes list), or the node by its key (bmc:ADDRESS:PORT) or BMC address (https://ADDRESS)',
    });
  }
  return { ...(record ? { record } : {}), key };
}

export async function nodesList(flags: StoreFlags & { output: string }): Promise<string> {
  return withStore(flags, async (store) => {
    const records = await store.list();
    return flags.output === 'json' ? `${JSON.stringify(records, null, 2)}\n` : formatNodeList(records, store.where);
  });
}

export async function nodesShow(node: string, flags: StoreFlags & { output: string }): Promise<string> {
  return withStore(flags, async (store) => {
    const { record } = await find(store, node);
    if (!record) {
      throw new TsbmError('runtime', `no node record for ${node} in ${store.where}`, {
        hint: 'tsbm nodes list shows the recorded nodes; a node gets a record when a run drives it',
      });
    }
    return flags.output === 'json' ? `${JSON.stringify(record, null, 2)}\n` : formatNodeShow(record);
  });
}

export async function nodesProtect(node: string, on: boolean, flags: StoreFlags & { reason?: string }): Promise<string> {
  return withStore(flags, async (store) => {
    const { record, key } = await found(store, node);
    const name = record?.name ?? node;
    const next = await store.edit(key, name, (r) => {
      const { protectedReason: _, ...base } = r ?? freshRecord(key, name);
      return { ...base, protected: on, ...(on && flags.reason ? { protectedReason: flags.reason } : {}) };
    });
    return `${next.name} (${next.key}): ${on ? `protected${next.protectedReason ? ` (${next.protectedReason})` : ''}` : 'not protected'}\n`;
  });
}

export async function nodesSetState(node: string, state: string, flags: StoreFlags & { reason?: string }): Promise<string> {
  if (!(PROVISION_STATES as readonly string[]).includes(state)) {
    throw optionsError(`"${state}" is not a provision state`, `one of: ${PROVISION_STATES.join(', ')}`);
  }
  const to = state as ProvisionState;
  return withStore(flags, async (store) => {
    const { record, key } = await found(store, node);
    const name = record?.name ?? node;
    const next = await store.edit(key, name, (r) => {
      const { lastError: _e, activeSince: _a, ...base } = r ?? freshRecord(key, name);
      const failed = to === 'deploy failed' || to === 'unknown';
      return {
        ...base,
        provisionState: to,
        ...(to === 'active' ? { activeSince: r?.provisionState === 'active' && r.activeSince ? r.activeSince : Date.now() } : {}),
        ...(failed && flags.reason ? { lastError: flags.reason } : {}),
      };
    });
    return `${next.name} (${next.key}): ${next.provisionState}\n`;
  });
}
