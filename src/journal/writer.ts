// The run journal: an append-only JSON Lines file per run. Records are written synchronously as
// events arrive; durability is a group commit: `barrier()` resolves once everything written so
// far is fsync'ed, and the executor awaits it before each remote step, so one fsync covers all
// hosts that reached that point together (1000 nodes cost a handful of fsyncs, not thousands).
import { closeSync, fdatasync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { TsbmError } from '../errors.js';
import type { EventBus, TsbmEvent } from '../output/events.js';
import type { JournalHeader, JournalRecord } from './records.js';

export class Journal {
  readonly file: string;
  private fd: number | undefined;
  private written = 0; // records written
  private synced = 0; // records known durable
  private syncing: Promise<void> | undefined;
  private failure: TsbmError | undefined;

  constructor(dir: string, runId: string) {
    mkdirSync(dir, { recursive: true });
    this.file = join(dir, `${runId}.jsonl`);
    this.fd = openSync(this.file, 'a', 0o600);
  }

  /** Appends one record. A write failure (disk full) is kept and surfaces at the next barrier. */
  append(record: JournalRecord): void {
    if (this.fd === undefined || this.failure) return;
    try {
      writeSync(this.fd, JSON.stringify(record) + '\n');
      this.written++;
    } catch (e) {
      this.failure = journalError(this.file, e);
    }
  }

  /** The error that stopped the journal, if any (the run must stop before unrecorded remote work). */
  get error(): TsbmError | undefined {
    return this.failure;
  }

  /** Resolves when every record appended so far is on disk; rejects if the journal failed. */
  async barrier(): Promise<void> {
    for (;;) {
      if (this.failure) throw this.failure;
      if (this.synced >= this.written || this.fd === undefined) return;
      if (!this.syncing) {
        const target = this.written;
        const fd = this.fd;
        this.syncing = new Promise<void>((resolve) => {
          fdatasync(fd, (err) => {
            if (err) this.failure = journalError(this.file, err);
            else this.synced = Math.max(this.synced, target);
            this.syncing = undefined;
            resolve();
          });
        });
      }
      await this.syncing;
    }
  }

  async close(): Promise<void> {
    try {
      await this.barrier();
    } finally {
      if (this.fd !== undefined) closeSync(this.fd);
      this.fd = undefined;
    }
  }
}

function journalError(file: string, e: unknown): TsbmError {
  const code = (e as NodeJS.ErrnoException).code;
  const why = code === 'ENOSPC' ? 'no space left on the device' : (e as Error).message;
  return new TsbmError('runtime', `cannot write the run journal ${file}: ${why}`, {
    hint: 'free space or point --journal-dir elsewhere; the run stopped before doing remote work it could not record',
  });
}

/** Subscribes the journal to the (already redacting) event bus. */
export function attachJournal(bus: EventBus, journal: Journal, header: JournalHeader): () => void {
  journal.append(header);
  return bus.on((event: TsbmEvent) => journal.append(event));
}
