// Node locks as files: one lock file per machine in the lock directory, named after the node's
// identity (journal/node-key.ts), holding its owner (run id, pid, machine, a random token). The
// lock-file mechanism (util/lock-file.ts) takes over a lock whose owner process is gone on this
// machine (or whose pid now belongs to a newer process). The file node store builds on this.
import { randomBytes } from 'node:crypto';
import { rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { TsbmError } from '../errors.js';
import { describeKey, type LockTarget } from '../journal/node-key.js';
import { ensurePrivateDir } from '../journal/private-dir.js';
import { type LockOwner, ownerHere, sweepOwnerRecords, takeLock, writeOwnerRecord } from '../util/lock-file.js';

export const lockFileFor = (dir: string, key: string): string => join(dir, `${encodeURIComponent(key)}.lock`);

/** Locks taken together: the owner they carry and each key's file. */
export interface FileLockSet {
  owner: LockOwner;
  files: ReadonlyMap<string, string>;
  /** Hosts (inventory names) by key, for messages. */
  hosts: ReadonlyMap<string, readonly string[]>;
  release(): void;
}

/** Where a holder runs, for messages: `pid 42` here, `pid 42 on ctl-2` elsewhere. */
function holderPlace(holder: LockOwner, here: string): string {
  return holder.machine === here ? `pid ${holder.pid}` : `pid ${holder.pid} on ${holder.machine}`;
}

/**
 * Takes every target's lock or none; throws naming the holder's run id. Targets that share a
 * key (two inventory names of one machine) share its lock. Keys are taken in sorted order, so
 * two runs wanting overlapping sets meet at the same first contended node and one of them gets
 * all of its set (in any other order each could take one node and both be refused).
 */
export function takeFileLocks(dir: string, targets: readonly LockTarget[], runId: string, hint?: string): FileLockSet {
  ensurePrivateDir(dir, 'node lock directory');
  const byKey = new Map<string, string[]>();
  for (const { host, key } of targets) byKey.set(key, [...(byKey.get(key) ?? []), host]);
  const owner: LockOwner = { ...ownerHere(runId), token: randomBytes(12).toString('hex') };
  sweepOwnerRecords(dir, owner.machine);
  const me = writeOwnerRecord(dir, owner);
  const files = new Map<string, string>();
  const release = () => {
    for (const f of files.values()) {
      try {
        unlinkSync(f);
      } catch {
        // already gone
      }
    }
    files.clear();
  };
  try {
    for (const key of [...byKey.keys()].sort()) {
      const hosts = byKey.get(key)!;
      const file = lockFileFor(dir, key);
      const holder = takeLock(file, me);
      if (holder) {
        const node = describeKey(key);
        throw new TsbmError(
          'runtime',
          `host ${hosts.join(', ')} is locked by run ${holder.runId} (${holderPlace(holder, owner.machine)}${node ? `; ${node}` : ''})`,
          {
            host: hosts[0]!,
            hint: hint ?? `that run may know the node by another inventory name; wait for it to finish, or remove ${file} if it is certainly dead`,
          },
        );
      }
      files.set(key, file);
    }
  } catch (e) {
    release();
    throw e;
  } finally {
    // The locks keep the record's content; its own name is not needed once they are linked.
    rmSync(me.file, { force: true });
  }
  return { owner, files, hosts: byKey, release };
}
