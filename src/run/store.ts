// The node store a run uses: the one the request names (--state, $TSBM_STATE, tsbm.cfg), else
// files beside the node locks. Opened before the journal and before any host: an etcd that does
// not answer refuses the run with nothing touched.
import { lockDirFor } from '../journal/lock-dir.js';
import { ensurePrivateDir } from '../journal/private-dir.js';
import type { NodeStore } from '../nodes/types.js';
import type { RunRequest } from './request.js';

export async function openRunStore(req: RunRequest): Promise<NodeStore> {
  if (req.nodeStore) return req.nodeStore;
  const { openNodeStore } = await import('../nodes/open.js');
  const setting = req.state ?? { kind: 'files' as const, dir: lockDirFor(req.lockDir) };
  // A directory tsbm may not use stops the run here, before the journal or any host.
  if (setting.kind === 'files') ensurePrivateDir(setting.dir, 'node lock directory');
  return openNodeStore(setting);
}
