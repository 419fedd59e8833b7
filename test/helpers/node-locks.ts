// Node locks taken directly with the file store's mechanism (src/nodes/file-locks.ts), for tests
// of the lock files themselves: a bare string is a target keyed by itself.
import type { LockTarget } from '../../src/journal/node-key.js';
import { takeFileLocks } from '../../src/nodes/file-locks.js';

export function lockNodes(dir: string, targets: readonly (string | LockTarget)[], runId: string): { release(): void } {
  return takeFileLocks(
    dir,
    targets.map((t) => (typeof t === 'string' ? { host: t, key: t } : t)),
    runId,
  );
}
