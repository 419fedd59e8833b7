// Turns byte counts seen over time into progress updates: bytes, rate and ETA, throttled so
// a fast stream does not flood the event bus.
import type { ProgressUpdate } from './types.js';
import { MIB } from './disk.js';

export class ByteProgress {
  private lastEmit = 0;
  private readonly start: number;

  constructor(
    private readonly label: string,
    private readonly total: number | undefined,
    private readonly emit: (u: ProgressUpdate) => void,
    private readonly now: () => number = Date.now,
    private readonly everyMs = 1000,
  ) {
    this.start = now();
  }

  /** Reports `bytes` done so far; `force` for the final update. */
  update(bytes: number, force = false): void {
    const t = this.now();
    if (!force && t - this.lastEmit < this.everyMs) return;
    this.lastEmit = t;
    this.emit(progressUpdate(this.label, bytes, this.total, (t - this.start) / 1000));
  }
}

/** The renderer shows current/total and its own ETA; the message adds the rate and ETA for plain logs. */
export function progressUpdate(
  label: string,
  bytes: number,
  total: number | undefined,
  elapsedS: number,
): ProgressUpdate {
  const rate = elapsedS > 0 ? bytes / elapsedS : 0;
  const parts = [label];
  if (rate > 0) parts.push(`${fmtBytes(rate)}/s`);
  if (total && rate > 0 && bytes < total) parts.push(`ETA ${fmtDuration((total - bytes) / rate)}`);
  return { message: parts.join(', '), current: bytes, ...(total ? { total } : {}), unit: 'bytes' };
}

export function fmtBytes(n: number): string {
  if (n >= 1024 * MIB) return `${(n / (1024 * MIB)).toFixed(1)} GiB`;
  if (n >= MIB) return `${(n / MIB).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${Math.round(n)} B`;
}

export function fmtDuration(s: number): string {
  const t = Math.max(0, Math.round(s));
  if (t < 60) return `${t}s`;
  if (t < 3600) return `${Math.floor(t / 60)}m${String(t % 60).padStart(2, '0')}s`;
  return `${Math.floor(t / 3600)}h${String(Math.floor((t % 3600) / 60)).padStart(2, '0')}m`;
}
