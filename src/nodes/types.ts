// The node store's contract (agreed with the run lifecycle in /work/coord/node-store-contract.md):
// what tsbm knows of each machine, and the locks that keep two runs off one machine. Two
// implementations behave alike behind it: files beside the node locks (one controller) and etcd
// (several controllers); test/integration/node-store-contract.test.ts runs one suite on both.
import type { LockTarget } from '../journal/node-key.js';

/** A subset of Ironic's provision states, plus `unknown` when tsbm cannot tell. */
export type ProvisionState = 'available' | 'deploying' | 'active' | 'deploy failed' | 'undeploying' | 'unknown';

export const PROVISION_STATES: readonly ProvisionState[] = ['available', 'deploying', 'active', 'deploy failed', 'undeploying', 'unknown'];

/** What tsbm knows of one machine. Keyed by identity (the node lock's key), not inventory name. */
export interface NodeRecord {
  /** The lock key (journal/node-key.ts), e.g. `bmc:10.0.0.5:443`. */
  key: string;
  /** The Redfish System id, when known (one BMC may have several Systems). */
  system?: string;
  /** The inventory name the last run knew it by. */
  name: string;
  provisionState: ProvisionState;
  protected: boolean;
  protectedReason?: string;
  /** What made the state so: image (instance_info.image_source or image URL), playbook (absolute path), run id. */
  image?: string;
  playbook?: string;
  runId?: string;
  /** ms since the epoch of the last write. */
  updated: number;
  /** When it became `active` (ms since the epoch). */
  activeSince?: number;
  /** Why it is `deploy failed` / `unknown` (one line, already redacted). */
  lastError?: string;
  /** The last power state and media state tsbm read back from the BMC, with when. */
  power?: { state: 'On' | 'Off' | 'unknown'; read: number };
  media?: { inserted: boolean; read: number };
  /** Monotonic per record; the store sets it on every write. */
  version: number;
}

/** A record as a writer gives it: the store sets `version` and `updated`. */
export type NodeRecordInput = Omit<NodeRecord, 'version' | 'updated'>;

/** One node held by one run. */
export interface NodeLease {
  readonly key: string;
  /** Fencing token: store-specific (etcd: the lock key's create revision; files: the lock's owner id). */
  readonly fence: string;
  /** Aborted when the store can no longer vouch for the lock (lease expired, etcd lost, lock file taken). */
  readonly lost: AbortSignal;
}

/** The locks one run holds (all taken together, all or none). */
export interface HeldNodes {
  lease(key: string): NodeLease | undefined;
  /** Releases every lock (records stay). Idempotent. */
  release(): Promise<void>;
}

export interface NodeStore {
  /** For messages: "files in /var/lib/tsbm" or "etcd at http://127.0.0.1:2379". */
  readonly where: string;
  /**
   * Takes every target's lock or none. A target held by another live run is a TsbmError
   * ('runtime') naming the host, the holder's run id and controller, and what to do.
   */
  acquire(targets: readonly LockTarget[], runId: string): Promise<HeldNodes>;
  get(key: string): Promise<NodeRecord | undefined>;
  list(): Promise<NodeRecord[]>;
  /**
   * Writes the record of a node this run holds. Refused with a TsbmError when the lease is
   * no longer this run's (the fencing check: a paused or partitioned controller that lost its
   * lock cannot write, and must not act on the node). `version` is set by the store.
   */
  write(lease: NodeLease, record: NodeRecordInput): Promise<NodeRecord>;
  /**
   * Fenced check without a write: resolves when `lease` is still this run's, else throws the
   * same TsbmError as `write`. Called before each destructive step.
   */
  check(lease: NodeLease): Promise<void>;
  /**
   * Outside a run (`tsbm nodes protect|unprotect|set-state`): changes a record atomically
   * (creating it when absent with `name` and state `unknown`), refused while a live run holds
   * the node's lock.
   */
  edit(key: string, name: string, change: (r: NodeRecord | undefined) => NodeRecordInput): Promise<NodeRecord>;
  close(): Promise<void>;
}
