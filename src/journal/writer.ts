// The run journal: an append-only JSON Lines file per run. Records are gathered as events arrive
// and written together at the end of the event-loop turn (a 1000-node run appends ~45 000 of
// them; one write each was over a second of the runner's CPU), and at once by `barrier()`,
// `close()` and process exit. Durability is a group commit: `barrier()` resolves once everything
// appended so far is written and fsync'ed, and the executor awaits it before each remote step,
// so one fsync covers all hosts that reached that point together.
import { closeSync, fdatasync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { TsbmError } from '../errors.js';
import type { EventBus, TsbmEvent } from '../output/events.js';
import { ensurePrivateDir } from './private-dir.js';
import type { JournalHeader, JournalRecord } from './records.js';

/** Pending records are written once they reach this size, whatever the event loop is doing. */
const FLUSH_BYTES = 256 * 1024;

export class Journal {
  readonly file: string;
  private fd: number | undefined;
  private written = 0; // records written
  private synced = 0; // records known durable
  private syncing: Promise<void> | undefined;
  private failure: TsbmError | undefined;
  private pending: string[] = [];
  private pendingBytes = 0;
  private flushScheduled = false;
  private readonly onExit = () => this.flush();

  constructor(dir: string, runId: string) {
    ensurePrivateDir(dir, 'run journal directory');
    this.file = join(dir, `${runId}.jsonl`);
    this.fd = openSync(this.file, 'a', 0o600);
    process.on('exit', this.onExit);
  }

  /** Appends one record. A write failure (disk full) is kept and surfaces at the next barrier. */
  append(record: JournalRecord): void {
    if (this.fd === undefined || this.failure) return;
    const line = `${JSON.stringify(record)}\n`;
    this.pending.push(line);
    this.pendingBytes += line.length;
    this.written++;
    if (this.pendingBytes >= FLUSH_BYTES) this.flush();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Writes what was appended and not yet written (synchronously). */
  private flush(): void {
    this.flushScheduled = false;
    if (this.pending.length === 0) return;
    const data = Buffer.from(this.pending.join(''));
    this.pending = [];
    this.pendingBytes = 0;
    if (this.fd === undefined || this.failure) return;
    try {
      // A short write (the disk filling up) is not an error yet: the next write says why.
      for (let off = 0; off < data.length; ) off += writeSync(this.fd, data, off);
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
      // Records appended while an fsync ran are written before the next one starts.
      if (!this.syncing) this.flush();
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
      this.flush();
      process.off('exit', this.onExit);
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
