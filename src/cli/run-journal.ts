// The run journal of `tsbm run`: every event (already redacted by the bus) appended to
// <dir>/<run-id>.jsonl and made durable before each task starts on a host (the executor awaits
// the barrier), and a lock per host the run touches so two runs never drive the same node.
// Writing, reading and locking live in src/journal; this only connects them to a run.
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { RunHooks } from '../executor/deps.js';
import type { RunOptions } from '../executor/options.js';
import { acquireNodeLocks, type NodeLocks } from '../journal/locks.js';
import { newRunId } from '../journal/run-id.js';
import { attachJournal, Journal } from '../journal/writer.js';
import type { EventBus } from '../output/events.js';
import type { Redactor } from '../output/redact.js';

export const DEFAULT_LOCK_DIR = '.tsbm/locks';

export interface RunJournal {
  runId: string;
  hooks: RunHooks;
  /** Flushes and closes the journal and releases every host lock. */
  close(): Promise<void>;
}

/** sha256 over the files' contents (a directory contributes its path: its files are hashed by the loader's own rules). */
function hashFiles(paths: readonly string[]): string {
  const h = createHash('sha256');
  for (const p of paths) {
    h.update(`${p}\0`);
    try {
      if (statSync(p).isFile()) h.update(readFileSync(p));
    } catch {
      // unreadable: the loader reports it; the hash still covers the name
    }
  }
  return h.digest('hex');
}

export function openRunJournal(
  opts: RunOptions,
  deps: { bus: EventBus; redactor: Redactor; journalDir: string; lockDir?: string; version: string },
): RunJournal {
  const runId = newRunId();
  const journal = new Journal(deps.journalDir, runId);
  const detach = attachJournal(deps.bus, journal, {
    type: 'journal_start',
    time: Date.now(),
    runId,
    version: deps.version,
    playbook: resolve(opts.playbook),
    playbookHash: hashFiles([opts.playbook]),
    inventories: opts.inventories.map((i) => resolve(i)),
    inventoryHash: hashFiles(opts.inventories),
    options: deps.redactor.redactDeep({ ...opts } as Record<string, unknown>),
  });
  const lockDir = deps.lockDir ?? DEFAULT_LOCK_DIR;
  const locks = new Map<string, NodeLocks>();

  const hooks: RunHooks = {
    async beforeTask(host: string): Promise<void> {
      // Lock a host the first time the run is about to work on it; a held lock stops the run.
      if (!locks.has(host)) locks.set(host, acquireNodeLocks(lockDir, [host], runId));
      await journal.barrier();
    },
  };

  return {
    runId,
    hooks,
    close: async () => {
      detach();
      try {
        await journal.close();
      } finally {
        for (const l of locks.values()) l.release();
        locks.clear();
      }
    },
  };
}
