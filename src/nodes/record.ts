// Node records as stored: read back with a shape check (a record is data another controller or
// a person may have written), stamped with `version` and `updated` on every write.
import { TsbmError } from '../errors.js';
import { type NodeRecord, type NodeRecordInput, PROVISION_STATES } from './types.js';

/** The record `tsbm nodes ...` starts from for a machine tsbm has no record of. */
export function freshRecord(key: string, name: string): NodeRecordInput {
  return { key, name, provisionState: 'unknown', protected: false };
}

/**
 * A node record is keyed by its lock's key, or, for one System of a BMC that manages several
 * (a blade enclosure: one lock for the BMC, a record per System), by `<lock key>#<System id>`.
 */
export function lockKeyOf(recordKey: string): string {
  if (!recordKey.startsWith('bmc:')) return recordKey;
  const i = recordKey.indexOf('#');
  return i < 0 ? recordKey : recordKey.slice(0, i);
}

/** The key a run holding `leaseKey` writes `recordKey` under: that node's, or one of its BMC's Systems. */
export function recordKeyUnder(leaseKey: string, recordKey: string | undefined): string {
  const key = recordKey || leaseKey;
  if (lockKeyOf(key) !== leaseKey) {
    throw new TsbmError('runtime', `the node record ${key} is not under the lock this run holds (${leaseKey})`, {
      hint: 'write a node\'s record with the lease of that node',
    });
  }
  return key;
}

/** `input` as the next version of `previous`, written now. The key stays the one it is stored under. */
export function stamp(key: string, input: NodeRecordInput, previous: NodeRecord | undefined, now = Date.now()): NodeRecord {
  return { ...input, key, updated: now, version: (previous?.version ?? 0) + 1 };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses a stored record; `where` names it in the error (a file, or an etcd key). */
export function parseRecord(text: string, where: string): NodeRecord {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    v = undefined;
  }
  const ok =
    isObject(v) &&
    typeof v.key === 'string' &&
    typeof v.name === 'string' &&
    (PROVISION_STATES as readonly unknown[]).includes(v.provisionState) &&
    typeof v.protected === 'boolean' &&
    typeof v.version === 'number' &&
    typeof v.updated === 'number';
  if (!ok) {
    throw new TsbmError('runtime', `the node record ${where} is not a record tsbm wrote (bad JSON or missing fields)`, {
      hint: 'remove it (tsbm forgets that node) or restore it from a backup',
    });
  }
  return v as unknown as NodeRecord;
}
