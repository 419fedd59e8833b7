// The run journal of `tsbm run`: every event (already redacted by the bus) appended to
// <dir>/<run-id>.jsonl and made durable before each task starts on a host (the executor awaits
// the barrier), and what a resumed run takes over. Writing and reading live in src/journal; this
// only connects them to a run. Node locks and records are the node store's (run/nodes.ts).
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { RunHooks } from '../executor/deps.js';
import type { RunOptions } from '../executor/options.js';
import { patternFiles } from '../inventory/patterns.js';
import type { ResumeState } from '../journal/resume.js';
import type { RunScope } from '../journal/scope.js';
import { attachJournal, Journal } from '../journal/writer.js';
import type { EventBus } from '../output/events.js';
import type { Redactor } from '../output/redact.js';

export interface RunJournal {
  runId: string;
  hooks: RunHooks;
  /** Records that the run ended before the executor could (it threw: a bad playbook, an empty --limit). */
  endWith(exitCode: number, message: string): void;
  /** Flushes and closes the journal. */
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
function hashFiles(paths: readonly string[]): string {
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
  const beside = (d: string) =>
    ['roles', 'group_vars', 'host_vars'].map((x) => join(d, x)).filter((x) => existsSync(x));
  return {
    playbookHash: hashFiles([opts.playbook, ...beside(pdir)]),
    // A --limit @file picks the hosts too: edited after the run, a resume would widen to hosts the
    // run never targeted, so its content counts as the inventory's.
    inventoryHash: hashFiles([
      ...opts.inventories.flatMap((i) => [i, ...beside(dirname(resolve(i)))]),
      ...(opts.limit === undefined ? [] : patternFiles(opts.limit, pdir)),
    ]),
  };
}

export function openRunJournal(
  opts: RunOptions,
  deps: {
    bus: EventBus;
    redactor: Redactor;
    journalDir: string;
    runId: string;
    version: string;
    scope: RunScope;
    resume?: ResumeState;
  },
): RunJournal {
  const runId = deps.runId;
  const journal = new Journal(deps.journalDir, runId);
  const hashes = runHashes(opts);
  const { extraVars, ...rest } = opts;
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
    // Extra vars by name only: a value may be a password (its hash is in the scope).
    options: deps.redactor.redactDeep({ ...rest, extraVars: Object.keys(extraVars) } as Record<
      string,
      unknown
    >),
    scope: deps.scope,
  });
  const hooks: RunHooks = {
    ...(deps.resume
      ? {
          completed: deps.resume.completed,
          restore: deps.resume.restore,
          resumedFrom: deps.resume.runId,
          staysFailed: deps.resume.staysFailed,
          restarts: deps.resume.restarts,
        }
      : {}),
    async beforeTask(): Promise<void> {
      await journal.barrier();
    },
  };

  return {
    runId,
    hooks,
    endWith: (exitCode, message) => {
      journal.append({ type: 'warning', time: Date.now(), message: deps.redactor.redact(message) });
      journal.append({ type: 'run_end', time: Date.now(), exitCode, durationMs: 0 });
    },
    close: async () => {
      detach();
      await journal.close();
    },
  };
}
