// Node locks: one lock file per targeted node so two runs never drive the same node. A lock is
// named after the node's identity (src/journal/node-key.ts), not its inventory name, and
// records its owner (run id, pid, machine); the lock-file mechanism (util/lock-file.ts) takes
// over a lock whose owner process is gone on this machine (or whose pid now belongs to a newer
// process).
import { rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { TsbmError } from '../errors.js';
import { ownerHere, sweepOwnerRecords, takeLock, writeOwnerRecord } from '../util/lock-file.js';
import { describeKey, type LockTarget } from './node-key.js';
import { ensurePrivateDir } from './private-dir.js';

export interface NodeLocks {
  release(): void;
}

const fileFor = (dir: string, key: string) => join(dir, `${encodeURIComponent(key)}.lock`);

/**
 * Takes every target's lock or none; throws naming the holder's run id. Targets that share a
 * key (two inventory names of one BMC in this run) share its lock. A bare string is a target
 * keyed by itself.
 */
export function acquireNodeLocks(dir: string, targets: readonly (string | LockTarget)[], runId: string): NodeLocks {
  ensurePrivateDir(dir, 'node lock directory');
  const byKey = new Map<string, string[]>();
  for (const t of targets) {
    const { host, key } = typeof t === 'string' ? { host: t, key: t } : t;
    byKey.set(key, [...(byKey.get(key) ?? []), host]);
  }
  const owner = ownerHere(runId);
  sweepOwnerRecords(dir, owner.machine);
  const me = writeOwnerRecord(dir, owner);
  const taken: string[] = [];
  const release = () => {
    for (const f of taken.splice(0)) {
      try {
        unlinkSync(f);
      } catch {
        // already gone
      }
    }
  };
  try {
    for (const [key, hosts] of byKey) {
      const file = fileFor(dir, key);
      const holder = takeLock(file, me);
      if (holder) {
        const where = holder.machine === owner.machine ? `pid ${holder.pid}` : `pid ${holder.pid} on ${holder.machine}`;
        const host = hosts[0]!;
        const node = describeKey(key);
        throw new TsbmError('runtime', `host ${hosts.join(', ')} is locked by run ${holder.runId} (${where}${node ? `; ${node}` : ''})`, {
          host,
          hint: `that run may know the node by another inventory name; wait for it to finish, or remove ${file} if it is certainly dead`,
        });
      }
      taken.push(file);
    }
  } catch (e) {
    release();
    throw e;
  } finally {
    // The locks keep the record's content; its own name is not needed once they are linked.
    rmSync(me.file, { force: true });
  }
  return { release };
}
