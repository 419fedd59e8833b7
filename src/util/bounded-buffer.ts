// Output of a command run somewhere tsbm does not control, kept within a cap: the first half
// and the last half of the cap are kept, the middle is counted and dropped, and the text says
// where and how much. The head usually says what started, the tail how it ended.
import { fmtLimit } from './limits.js';

export class HeadTailBuffer {
  private readonly head: Buffer[] = [];
  private headLen = 0;
  private tail: Buffer[] = [];
  private tailLen = 0;
  /** Bytes dropped from the middle. */
  dropped = 0;
  private readonly headCap: number;
  private readonly tailCap: number;

  constructor(
    readonly cap: number,
    /** What the bytes are ("stdout of `lsblk`"), for the note. */
    private readonly what: string,
    /** The variable that raises the cap, for the note. */
    private readonly knob = 'tsbm_max_output',
  ) {
    this.headCap = Math.floor(cap / 2);
    this.tailCap = cap - this.headCap;
  }

  /** Bytes received so far (kept and dropped). */
  get total(): number {
    return this.headLen + this.tailLen + this.dropped;
  }

  push(chunk: Buffer): void {
    let c = chunk;
    if (this.headLen < this.headCap) {
      const take = Math.min(c.length, this.headCap - this.headLen);
      this.head.push(take === c.length ? c : Buffer.from(c.subarray(0, take)));
      this.headLen += take;
      c = c.subarray(take);
      if (c.length === 0) return;
    }
    this.tail.push(c);
    this.tailLen += c.length;
    // Whole chunks first, then the front of the oldest one kept.
    while (this.tail.length > 1 && this.tailLen - (this.tail[0] as Buffer).length >= this.tailCap) {
      const gone = this.tail.shift() as Buffer;
      this.tailLen -= gone.length;
      this.dropped += gone.length;
    }
    const excess = this.tailLen - this.tailCap;
    if (excess > 0) {
      // A copy, so the dropped bytes of a large chunk are not kept alive by a view of it.
      this.tail[0] = Buffer.from((this.tail[0] as Buffer).subarray(excess));
      this.tailLen -= excess;
      this.dropped += excess;
    }
  }

  /** Everything kept; when bytes were dropped, a one-line note stands where they were. */
  toBuffer(): Buffer {
    if (this.dropped === 0) return Buffer.concat([...this.head, ...this.tail]);
    const note = Buffer.from(
      `\n[tsbm: ${this.dropped} bytes of ${this.what} dropped here; kept the first and last ${fmtLimit(this.headCap)} (raise ${this.knob} to keep more)]\n`,
    );
    return Buffer.concat([...this.head, note, ...this.tail]);
  }

  toString(encoding: BufferEncoding = 'utf8'): string {
    return this.toBuffer().toString(encoding);
  }
}
