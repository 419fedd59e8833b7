// Bounds-checked reads from the first bytes of an image: an image's header is hostile input, so
// every read past the bytes at hand answers undefined instead of throwing or wrapping around.

export function u32be(b: Uint8Array, off: number): number | undefined {
  if (off < 0 || off + 4 > b.length) return undefined;
  return ((b[off]! << 24) >>> 0) + (b[off + 1]! << 16) + (b[off + 2]! << 8) + b[off + 3]!;
}

export function u32le(b: Uint8Array, off: number): number | undefined {
  if (off < 0 || off + 4 > b.length) return undefined;
  return ((b[off + 3]! << 24) >>> 0) + (b[off + 2]! << 16) + (b[off + 1]! << 8) + b[off]!;
}

/** A 64-bit field as a bigint (sizes and offsets may exceed 2^53 in a hostile header). */
export function u64be(b: Uint8Array, off: number): bigint | undefined {
  const hi = u32be(b, off);
  const lo = u32be(b, off + 4);
  return hi === undefined || lo === undefined ? undefined : (BigInt(hi) << 32n) | BigInt(lo);
}

export function u64le(b: Uint8Array, off: number): bigint | undefined {
  const lo = u32le(b, off);
  const hi = u32le(b, off + 4);
  return hi === undefined || lo === undefined ? undefined : (BigInt(hi) << 32n) | BigInt(lo);
}

/** Whether the bytes at `off` are exactly `magic` (a string of byte values 0-255). */
export function hasMagic(b: Uint8Array, off: number, magic: string): boolean {
  if (off < 0 || off + magic.length > b.length) return false;
  for (let i = 0; i < magic.length; i++) if (b[off + i] !== magic.charCodeAt(i)) return false;
  return true;
}

/** Printable text for messages: control and non-ASCII bytes shown as `?`, at most `max` characters. */
export function printable(b: Uint8Array, off: number, len: number, max = 120): string {
  const end = Math.min(b.length, off + Math.max(0, len));
  let s = '';
  for (let i = Math.max(0, off); i < end; i++) {
    const c = b[i]!;
    if (c === 0) break;
    s += c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : '?';
  }
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** A bigint size as a number when it is one exactly, else undefined (a hostile 2^64 - 1). */
export function safeSize(v: bigint | undefined): number | undefined {
  return v !== undefined && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : undefined;
}
