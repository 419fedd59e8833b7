// The etcd node store, for several controllers (CI runners, Kubernetes pods) sharing one truth.
// Under a key prefix (default `tsbm/`): `locks/<node key>` is a node's lock, a key bound to the
// holding run's etcd lease (granted with the store's TTL, kept alive while the run holds it,
// revoked at release; when a controller dies, etcd deletes its locks one TTL later);
// `nodes/<node key>` is the node's record. A run's locks are created in one transaction that
// requires every one of them absent (all or none). The lock key's create revision is the
// fencing token: every write and check is a transaction comparing it, so a controller that lost
// its lease (paused, partitioned) cannot write after another run took the node.
import { hostname } from 'node:os';
import type { Etcd3, Lease, Namespace, Watcher } from 'etcd3';
import { TsbmError } from '../errors.js';
import { describeKey, type LockTarget } from '../journal/node-key.js';
import { fencedOut, ownLease, StoreLease } from './lease-loss.js';
import { lockKeyOf, parseRecord, recordKeyUnder, stamp } from './record.js';
import type { EtcdSetting } from './setting.js';
import type { HeldNodes, NodeLease, NodeRecord, NodeRecordInput, NodeStore } from './types.js';

interface EtcdOwner {
  runId: string;
  pid: number;
  machine: string;
  time: number;
}

const LOCKS = 'locks/';
/** Locks per transaction: etcd refuses a transaction of more than 128 operations (--max-txn-ops). */
const TXN_KEYS = 100;
const NODES = 'nodes/';

export class EtcdNodeStore implements NodeStore {
  readonly where: string;
  readonly #client: Etcd3;
  readonly #ns: Namespace;
  readonly #ttl: number;
  readonly #leases = new Set<StoreLease>();
  readonly #open = new Set<HeldNodes>();
  #watcher: Promise<Watcher> | undefined;

  constructor(client: Etcd3, setting: EtcdSetting) {
    this.#client = client;
    this.#ns = client.namespace(setting.prefix);
    this.#ttl = setting.ttlSeconds;
    this.where = `etcd at ${setting.endpoints.join(',')}`;
  }

  async acquire(targets: readonly LockTarget[], runId: string): Promise<HeldNodes> {
    const byKey = new Map<string, string[]>();
    for (const { host, key } of targets) byKey.set(key, [...(byKey.get(key) ?? []), host]);
    const keys = [...byKey.keys()].sort();
    const owner: EtcdOwner = { runId, pid: process.pid, machine: hostname(), time: Date.now() };
    const lease = this.#ns.lease(this.#ttl);
    let leaseId: string;
    try {
      leaseId = await lease.grant();
    } catch (e) {
      lease.release();
      throw this.#unreachable('take node locks', e);
    }
    const fences = new Map<string, string>();
    try {
      for (let i = 0; i < keys.length; i += TXN_KEYS) {
        const chunk = keys.slice(i, i + TXN_KEYS);
        const revision = await this.#take(chunk, byKey, JSON.stringify(owner), leaseId);
        for (const k of chunk) fences.set(k, revision);
      }
    } catch (e) {
      // Revoking the lease deletes the locks of the chunks already taken: none are kept.
      await lease.revoke().catch(() => lease.release());
      throw e instanceof TsbmError ? e : this.#unreachable('take node locks', e);
    }
    if (keys.length > 0) await this.#watchLocks(fences.get(keys[0]!)!);
    const mine = new Map<string, StoreLease>();
    for (const k of keys) {
      const l = new StoreLease(k, fences.get(k)!, byKey.get(k)!, runId);
      mine.set(k, l);
      this.#leases.add(l);
    }
    const loseAll = (why: string) => {
      for (const l of mine.values()) l.lose(why);
    };
    const stopWatchdog = this.#watchdog(lease, loseAll);
    lease.on('lost', (e: Error) => loseAll(`its etcd lease was lost: ${e.message}`));
    let released = false;
    const held: HeldNodes = {
      lease: (key) => mine.get(key),
      release: async () => {
        if (released) return;
        released = true;
        this.#open.delete(held);
        stopWatchdog();
        for (const l of mine.values()) {
          this.#leases.delete(l);
          l.lose('released');
        }
        // Revoking the lease deletes every lock bound to it; unreachable, they expire after the TTL.
        await lease.revoke().catch(() => lease.release());
      },
    };
    this.#open.add(held);
    return held;
  }

  /**
   * Creates the locks of `keys` bound to the lease in one transaction that requires every one
   * absent; returns its revision (each lock's create revision: the fencing token). A holder
   * that lets go between a refused transaction and the read of its lock leaves nothing to name:
   * it is tried again (a few times) rather than reporting a holder that is gone.
   */
  async #take(keys: readonly string[], byKey: ReadonlyMap<string, readonly string[]>, owner: string, leaseId: string): Promise<string> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const txn = this.#ns.if(LOCKS + keys[0]!, 'Create', '==', 0);
      for (const k of keys.slice(1)) txn.and(LOCKS + k, 'Create', '==', 0);
      const r = await txn.then(...keys.map((k) => this.#ns.put(LOCKS + k).value(owner).lease(leaseId))).commit();
      if (r.succeeded) return String(r.header.revision);
      await this.#refuse(keys, byKey);
    }
    throw new TsbmError('runtime', `the node locks kept changing hands in ${this.where}`, { hint: 'run again' });
  }

  /**
   * One watch over every lock key, started at the first acquire's revision: a held lock deleted
   * behind the run (its lease expired, or someone removed it) fires that lease's `lost` at once.
   */
  async #watchLocks(fromRevision: string): Promise<void> {
    if (this.#watcher) return;
    this.#watcher = this.#ns.watch().prefix(LOCKS).startRevision(fromRevision).create();
    let w: Watcher;
    try {
      w = await this.#watcher;
    } catch {
      // No watch: the watchdog and the fenced transactions still stop the run; try again next time.
      this.#watcher = undefined;
      return;
    }
    w.on('delete', (kv) => {
      const key = kv.key.toString().slice(LOCKS.length);
      // Only a deletion after the lock was taken: an earlier holding's release (this store took
      // the node again since) arrives late, or again when the watch reconnects.
      const at = BigInt(kv.mod_revision);
      for (const l of this.#leases) {
        if (l.key === key && at > BigInt(l.fence)) l.lose('its lock in etcd was deleted (the lease expired, or it was removed)');
      }
    });
    // A broken watch is re-established by the client; losing etcd is the watchdog's to report.
    w.on('error', () => undefined);
  }

  /**
   * Fires `lose` when the lease has not been renewed for two thirds of its TTL and etcd, asked
   * once more, does not renew it at once: this controller can no longer vouch for it (etcd
   * unreachable, or this process was paused until etcd expired it), so its runs stop starting
   * steps on the nodes. A renewal that is merely late (a busy controller's event loop) is
   * confirmed by that extra keep-alive and costs the run nothing.
   */
  #watchdog(lease: Lease, lose: (why: string) => void): () => void {
    let last = Date.now();
    let asking = false;
    const ok = () => {
      last = Date.now();
    };
    lease.on('keepaliveSucceeded', ok);
    const ttlMs = this.#ttl * 1000;
    const limit = (ttlMs * 2) / 3;
    const timer = setInterval(
      () => {
        const silent = Date.now() - last;
        if (silent <= limit || asking) return;
        asking = true;
        const sent = Date.now();
        const why = `its etcd lease was not renewed for ${(silent / 1000).toFixed(1)} s (TTL ${this.#ttl} s)`;
        const wait = Math.max(500, ttlMs / 3);
        let timeout: NodeJS.Timeout | undefined;
        const late = new Promise<never>((_, no) => {
          timeout = setTimeout(() => no(new Error(`no answer within ${wait} ms`)), wait);
        });
        Promise.race([lease.keepaliveOnce(), late])
          .then(
            // etcd renewed it as of `sent`: it holds at least a TTL from then.
            () => {
              last = Math.max(last, sent);
            },
            (e: Error) => lose(`${why} and etcd did not renew it when asked (${e.message.split('\n')[0]}): etcd unreachable, or this controller was paused`),
          )
          .finally(() => {
            clearTimeout(timeout);
            asking = false;
          });
      },
      Math.max(100, ttlMs / 6),
    );
    timer.unref();
    return () => {
      clearInterval(timer);
      lease.off('keepaliveSucceeded', ok);
    };
  }

  /** Names the first held node of a refused acquire (throws), or returns when none is held now. */
  async #refuse(keys: readonly string[], byKey: ReadonlyMap<string, readonly string[]>): Promise<void> {
    for (const k of keys) {
      const text = await this.#ns.get(LOCKS + k).string();
      if (text === null) continue;
      let holder: Partial<EtcdOwner> = {};
      try {
        holder = JSON.parse(text) as EtcdOwner;
      } catch {
        // not ours: named as unknown
      }
      const hosts = byKey.get(k)!;
      const node = describeKey(k);
      throw new TsbmError(
        'runtime',
        `host ${hosts.join(', ')} is locked by run ${holder.runId ?? 'unknown'} (controller ${holder.machine ?? 'unknown'}, pid ${holder.pid ?? '?'}${node ? `; ${node}` : ''})`,
        {
          host: hosts[0]!,
          hint: `that run may know the node by another inventory name; wait for it to finish (a dead controller's locks expire ${this.#ttl} s after it stopped)`,
        },
      );
    }
  }

  async check(lease: NodeLease): Promise<void> {
    const l = ownLease(lease, this.#leases, this.where);
    if (l.lost.aborted) throw fencedOut(l, l.lostReason ?? 'lost');
    let r: Awaited<ReturnType<ReturnType<Namespace['if']>['commit']>>;
    try {
      r = await this.#ns.if(LOCKS + l.key, 'Create', '==', l.fence).commit();
    } catch (e) {
      // Unreachable: the lock cannot be vouched for, so the run must not act on the node.
      throw fencedOut(l, `etcd did not answer: ${(e as Error).message}`);
    }
    if (!r.succeeded) throw fencedOut(l, 'its lock in etcd expired or was taken by another run');
  }

  async write(lease: NodeLease, record: NodeRecordInput): Promise<NodeRecord> {
    const l = ownLease(lease, this.#leases, this.where);
    if (l.lost.aborted) throw fencedOut(l, l.lostReason ?? 'lost');
    const key = recordKeyUnder(l.key, record.key);
    try {
      const { previous, modRevision } = await this.#read(key);
      const next = stamp(key, record, previous);
      const r = await this.#ns
        .if(LOCKS + l.key, 'Create', '==', l.fence)
        .and(NODES + key, 'Mod', '==', modRevision)
        .then(this.#ns.put(NODES + key).value(JSON.stringify(next)))
        .commit();
      if (r.succeeded) return next;
    } catch (e) {
      if (e instanceof TsbmError) throw e;
      throw fencedOut(l, `etcd did not answer: ${(e as Error).message}`);
    }
    // Either the lock is gone, or the record changed under a lock we hold (it cannot, but say so).
    await this.check(l);
    throw new TsbmError('runtime', `the record of ${l.hosts.join(', ')} changed in ${this.where} while this run held its lock`, {
      host: l.hosts[0] ?? l.key,
      hint: 'another tool wrote it without the lock; check it with tsbm nodes show',
    });
  }

  async #read(key: string): Promise<{ previous: NodeRecord | undefined; modRevision: string }> {
    const r = await this.#ns.get(NODES + key).exec();
    const kv = r.kvs[0];
    if (!kv) return { previous: undefined, modRevision: '0' };
    return { previous: parseRecord(kv.value.toString(), `${NODES}${key} in ${this.where}`), modRevision: kv.mod_revision };
  }

  async get(key: string): Promise<NodeRecord | undefined> {
    try {
      return (await this.#read(key)).previous;
    } catch (e) {
      throw e instanceof TsbmError ? e : this.#unreachable('read node records', e);
    }
  }

  async list(): Promise<NodeRecord[]> {
    let all: Record<string, string>;
    try {
      all = await this.#ns.getAll().prefix(NODES).sort('Key', 'Ascend').strings();
    } catch (e) {
      throw this.#unreachable('read node records', e);
    }
    return Object.entries(all).map(([k, v]) => parseRecord(v, `${k} in ${this.where}`));
  }

  async edit(key: string, name: string, change: (r: NodeRecord | undefined) => NodeRecordInput): Promise<NodeRecord> {
    // A transaction requiring the lock absent and the record unchanged since read: a run that
    // takes the node meanwhile, or another edit, makes it fail, and it is read and tried again.
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        const { previous, modRevision } = await this.#read(key);
        const next = stamp(key, change(previous), previous);
        const r = await this.#ns
          .if(LOCKS + lockKeyOf(key), 'Create', '==', 0)
          .and(NODES + key, 'Mod', '==', modRevision)
          .then(this.#ns.put(NODES + key).value(JSON.stringify(next)))
          .commit();
        if (r.succeeded) return next;
        await this.#refuseEdit(key, name);
      } catch (e) {
        throw e instanceof TsbmError ? e : this.#unreachable('change the node record', e);
      }
    }
    throw new TsbmError('runtime', `the record of ${name} kept changing in ${this.where}`, { host: name, hint: 'run the command again' });
  }

  async #refuseEdit(key: string, name: string): Promise<void> {
    try {
      const lock = lockKeyOf(key);
      await this.#refuse([lock], new Map([[lock, [name]]]));
    } catch (e) {
      if (!(e instanceof TsbmError)) throw e;
      throw new TsbmError('runtime', e.message, { host: name, hint: 'a run is driving this node: wait for it to finish, then edit the node again' });
    }
  }

  async close(): Promise<void> {
    for (const h of [...this.#open]) await h.release();
    await this.#watcher?.then((w) => w.cancel()).catch(() => undefined);
    this.#client.close();
  }

  #unreachable(what: string, e: unknown): TsbmError {
    return new TsbmError('runtime', `cannot ${what}: ${this.where} did not answer (${(e as Error).message})`, {
      hint: 'check that etcd runs and this controller reaches it (--state, TSBM_STATE), and its TLS settings',
      cause: e,
    });
  }
}
