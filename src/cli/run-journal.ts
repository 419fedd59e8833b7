// The run journal of `tsbm run`: every event (already redacted by the bus) appended to
// <dir>/<run-id>.jsonl and made durable before each task starts on a host (the executor awaits
// the barrier), and a lock per host the run touches so two runs never drive the same node.
// Writing, reading and locking live in src/journal; this only connects them to a run.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { RunHooks } from '../executor/deps.js';
import type { RunOptions } from '../executor/options.js';
import { acquireNodeLocks, type NodeLocks } from '../journal/locks.js';
import type { ResumeState } from '../journal/resume.js';
import { newRunId } from '../journal/run-id.js';
import { attachJournal, Journal } from '../journal/writer.js';
import type { EventBus } from '../output/events.js';
import type { Redactor } from '../output/redact.js';

export const DEFAULT_LOCK_DIR = '.tsbm/locks';

/** Where host locks live: TSBM_LOCK_DIR when set (tests and shared controllers), else .tsbm/locks. */
export function lockDirFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const d = env.TSBM_LOCK_DIR?.trim();
  return d ? d : DEFAULT_LOCK_DIR;
}

export interface RunJournal {
  runId: string;
  hooks: RunHooks;
  /** Flushes and closes the journal and releases every host lock. */
  close(): Promise<void>;
}

/** Every file under a directory, sorted (bounded: a huge tree is hashed by its names only). */
function filesUnder(dir: string, out: string[] = [], depth = 0): string[] {
  if (depth > 6 || out.length > 5000) return out;
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return out;
  }
  for (const n of names) {
    const p = join(dir, n);
    try {
      if (statSync(p).isDirectory()) filesUnder(p, out, depth + 1);
      else out.push(p);
    } catch {
      // vanished while listing
    }
  }
  return out;
}

/** sha256 over the files' names and contents; a directory contributes every file under it. */
export function hashFiles(paths: readonly string[]): string {
  const h = createHash('sha256');
  for (const p of paths) {
    const files = existsSync(p) && statSync(p).isDirectory() ? filesUnder(p) : [p];
    for (const f of files) {
      h.update(`${resolve(f)}\0`);
      try {
        h.update(readFileSync(f));
      } catch {
        // unreadable: the loader reports it; the hash still covers the name
      }
    }
  }
  return h.digest('hex');
}

/** What a resume compares: the playbook with the roles and vars beside it, and the inventories with theirs. */
export function runHashes(opts: RunOptions): { playbookHash: string; inventoryHash: string } {
  const pdir = dirname(resolve(opts.playbook));
  const beside = (d: string) => ['roles', 'group_vars', 'host_vars'].map((x) => join(d, x)).filter((x) => existsSync(x));
  return {
    playbookHash: hashFiles([opts.playbook, ...beside(pdir)]),
    inventoryHash: hashFiles(opts.inventories.flatMap((i) => [i, ...beside(dirname(resolve(i)))])),
  };
}

export function openRunJournal(
  opts: RunOptions,
  deps: { bus: EventBus; redactor: Redactor; journalDir: string; lockDir?: string; version: string; resume?: ResumeState },
): RunJournal {
  const runId = newRunId();
  const journal = new Journal(deps.journalDir, runId);
  const hashes = runHashes(opts);
  const detach = attachJournal(deps.bus, journal, {
    type: 'journal_start',
    time: Date.now(),
    runId,
    version: deps.version,
    playbook: resolve(opts.playbook),
    playbookHash: hashes.playbookHash,
    inventories: opts.inventories.map((i) => resolve(i)),
    inventoryHash: hashes.inventoryHash,
    ...(deps.resume ? { resumedFrom: deps.resume.runId } : {}),
    options: deps.redactor.redactDeep({ ...opts } as Record<string, unknown>),
  });
  const lockDir = deps.lockDir ?? lockDirFromEnv();
  const locks = new Map<string, NodeLocks>();

  const hooks: RunHooks = {
    ...(deps.resume ? { completed: deps.resume.completed, restore: deps.resume.restore } : {}),
    async beforePlay(hosts: string[]): Promise<void> {
      // Every targeted host is locked before the play touches any of them (all or none).
      const fresh = hosts.filter((h) => !locks.has(h));
      if (fresh.length === 0) return;
      const taken = acquireNodeLocks(lockDir, fresh, runId);
      for (const h of fresh) locks.set(h, taken);
    },
    async beforeTask(host: string): Promise<void> {
      // A host that joins without a play start (delegate_to) is locked the first time it is used.
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
        for (const l of new Set(locks.values())) l.release();
        locks.clear();
      }
    },
  };
}
