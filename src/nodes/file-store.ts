// The file node store (the default, for one controller or controllers sharing one POSIX file
// system): locks are the lock files of nodes/file-locks.ts, records are JSON files beside them
// (<dir>/nodes/<key>.json, written whole under a temporary name and renamed, mode 0600 in a
// private directory). The fencing check is that the lock file still carries this holding's
// random token; a timer re-reads the held locks so a lock taken away (removed by hand, or taken
// over by another run that judged this one dead) fires the lease's `lost` signal.
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { TsbmError } from '../errors.js';
import type { LockTarget } from '../journal/node-key.js';
import { ensurePrivateDir } from '../journal/private-dir.js';
import { readLockOwner } from '../util/lock-file.js';
import { lockFileFor, takeFileLocks } from './file-locks.js';
import { fencedOut, ownLease, StoreLease } from './lease-loss.js';
import { lockKeyOf, parseRecord, recordKeyUnder, stamp } from './record.js';
import type { HeldNodes, NodeLease, NodeRecord, NodeRecordInput, NodeStore } from './types.js';

const RECORD = /^(.+)\.json$/;

export interface FileStoreOptions {
  /** How often held locks are re-read for the `lost` signal (ms). */
  watchMs?: number;
}

export class FileNodeStore implements NodeStore {
  readonly where: string;
  readonly #dir: string;
  readonly #records: string;
  readonly #watchMs: number;
  readonly #leases = new Set<StoreLease>();

  constructor(dir: string, opts: FileStoreOptions = {}) {
    this.#dir = dir;
    this.#records = join(dir, 'nodes');
    this.#watchMs = opts.watchMs ?? 5000;
    this.where = `files in ${dir}`;
  }

  async acquire(targets: readonly LockTarget[], runId: string): Promise<HeldNodes> {
    const set = takeFileLocks(this.#dir, targets, runId);
    const token = set.owner.token!;
    const mine = new Map<string, StoreLease>();
    for (const [key, hosts] of set.hosts) {
      const lease = new StoreLease(key, token, hosts, runId);
      mine.set(key, lease);
      this.#leases.add(lease);
    }
    const timer = setInterval(() => {
      for (const lease of mine.values()) if (!lease.lost.aborted) this.#stillMine(lease);
    }, this.#watchMs);
    timer.unref();
    let released = false;
    return {
      lease: (key) => mine.get(key),
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(timer);
        // Only locks still ours are removed: one taken over meanwhile is the new holder's.
        for (const lease of mine.values()) {
          this.#leases.delete(lease);
          if (this.#stillMine(lease)) rmSync(lockFileFor(this.#dir, lease.key), { force: true });
          lease.lose('released');
        }
      },
    };
  }

  /** Reads the lock back: true while it carries this holding's token; else marks the lease lost. */
  #stillMine(lease: StoreLease): boolean {
    const holder = readLockOwner(lockFileFor(this.#dir, lease.key));
    if (holder?.token === lease.fence) return true;
    lease.lose(holder ? `its lock is now held by run ${holder.runId} (pid ${holder.pid} on ${holder.machine})` : 'its lock file is gone');
    return false;
  }

  async check(lease: NodeLease): Promise<void> {
    const l = ownLease(lease, this.#leases, this.where);
    if (l.lost.aborted || !this.#stillMine(l)) throw fencedOut(l, l.lostReason ?? 'lost');
  }

  async write(lease: NodeLease, record: NodeRecordInput): Promise<NodeRecord> {
    const key = recordKeyUnder(lease.key, record.key);
    await this.check(lease);
    const next = stamp(key, record, await this.get(key));
    this.#put(next);
    return next;
  }

  async get(key: string): Promise<NodeRecord | undefined> {
    const file = this.#fileFor(key);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    return parseRecord(text, file);
  }

  async list(): Promise<NodeRecord[]> {
    let names: string[];
    try {
      names = readdirSync(this.#records);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    const out: NodeRecord[] = [];
    for (const name of names.sort()) {
      const m = RECORD.exec(name);
      if (!m || name.startsWith('.')) continue;
      const r = await this.get(decodeURIComponent(m[1]!));
      if (r) out.push(r);
    }
    return out;
  }

  async edit(key: string, name: string, change: (r: NodeRecord | undefined) => NodeRecordInput): Promise<NodeRecord> {
    // Taking the node's lock for the edit keeps a run from starting on it meanwhile, and
    // refuses the edit while a live run holds it.
    const set = takeFileLocks(
      this.#dir,
      [{ host: name, key: lockKeyOf(key) }],
      `tsbm-nodes-edit-${process.pid}`,
      'a run is driving this node: wait for it to finish, then edit the node again',
    );
    try {
      const previous = await this.get(key);
      const next = stamp(key, change(previous), previous);
      this.#put(next);
      return next;
    } finally {
      set.release();
    }
  }

  async close(): Promise<void> {
    // Nothing is open between calls; held locks are released by their HeldNodes.
  }

  #fileFor(key: string): string {
    return join(this.#records, `${encodeURIComponent(key)}.json`);
  }

  /** Writes the record whole under a temporary name, then renames it over the old one. */
  #put(record: NodeRecord): void {
    ensurePrivateDir(this.#records, 'node record directory');
    const file = this.#fileFor(record.key);
    const tmp = join(this.#records, `.${randomBytes(6).toString('hex')}.tmp`);
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(record)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      renameSync(tmp, file);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw new TsbmError('runtime', `cannot write the node record ${file}: ${(e as Error).message}`, {
        hint: 'check the node state directory is writable by this user',
      });
    }
  }
}
