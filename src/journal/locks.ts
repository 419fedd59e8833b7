// Node locks for callers that hold them synchronously (cli/run-journal.ts, until the run takes
// them through the node store, src/nodes/). The mechanism is the file node store's
// (nodes/file-locks.ts): one lock file per machine, all or none, the holder named when refused.
import { takeFileLocks } from '../nodes/file-locks.js';
import type { LockTarget } from './node-key.js';

export interface NodeLocks {
  release(): void;
}

/**
 * Takes every target's lock or none; throws naming the holder's run id. Targets that share a
 * key (two inventory names of one BMC in this run) share its lock. A bare string is a target
 * keyed by itself.
 */
export function acquireNodeLocks(dir: string, targets: readonly (string | LockTarget)[], runId: string): NodeLocks {
  const set = takeFileLocks(
    dir,
    targets.map((t) => (typeof t === 'string' ? { host: t, key: t } : t)),
    runId,
  );
  return { release: set.release };
}
