// Reads a stream whole, up to a cap: past it the reading stops at once (no buffering of what a
// broken or hostile peer keeps sending) and `tooBig` says why.
export class OverCapError extends Error {
  constructor(
    readonly cap: number,
    /** Bytes received when reading stopped (more than cap). */
    readonly received: number,
  ) {
    super(`more than ${cap} bytes`);
  }
}

/**
 * The stream's bytes, or an OverCapError as soon as they pass `cap` (the stream is destroyed
 * when it can be, so the peer's connection goes too).
 */
export async function readCapped(stream: AsyncIterable<Uint8Array> & { destroy?: (e?: Error) => void }, cap: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const c of stream) {
    total += c.length;
    if (total > cap) {
      const err = new OverCapError(cap, total);
      stream.destroy?.();
      throw err;
    }
    chunks.push(Buffer.from(c.buffer, c.byteOffset, c.length));
  }
  return Buffer.concat(chunks, total);
}
