// The node store a run uses: the one the request names (--state, $TSBM_STATE, tsbm.cfg), else
// files beside the node locks. Opened before the journal and before any host: an etcd that does
// not answer refuses the run with nothing touched.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simSpecOf } from '../inventory/sim-spec.js';
import { lockDirFor } from '../journal/lock-dir.js';
import { ensurePrivateDir } from '../journal/private-dir.js';
import type { NodeStore } from '../nodes/types.js';
import type { RunRequest } from './request.js';

export async function openRunStore(req: RunRequest, inventories: readonly string[]): Promise<NodeStore> {
  if (req.nodeStore) return req.nodeStore;
  const { openNodeStore } = await import('../nodes/open.js');
  if (inventories.length > 0 && inventories.every((p) => simSpecOf(p) !== undefined)) {
    // Every node of this run is a lab started for it (tsbm_sim), gone when it ends: their locks
    // and records live with the run, never in the operator's store, where they would describe
    // machines that no longer exist (and a later lab's node on a port one of them had would be
    // taken for it: "active", refused).
    const dir = mkdtempSync(join(tmpdir(), 'tsbm-sim-state-'));
    return removedOnClose(await openNodeStore({ kind: 'files', dir }), dir);
  }
  const setting = req.state ?? { kind: 'files' as const, dir: lockDirFor(req.lockDir) };
  // A directory tsbm may not use stops the run here, before the journal or any host.
  if (setting.kind === 'files') ensurePrivateDir(setting.dir, 'node lock directory');
  return openNodeStore(setting);
}

function removedOnClose(store: NodeStore, dir: string): NodeStore {
  return {
    where: store.where,
    acquire: (targets, runId) => store.acquire(targets, runId),
    get: (key) => store.get(key),
    list: () => store.list(),
    write: (lease, record) => store.write(lease, record),
    check: (lease) => store.check(lease),
    edit: (key, name, change) => store.edit(key, name, change),
    close: async () => {
      try {
        await store.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
