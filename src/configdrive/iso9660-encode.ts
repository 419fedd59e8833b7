// Byte-level encoders for ISO 9660 (ECMA-119) fields: both-endian integers, padded strings,
// the two date formats. Kept apart so the layout code reads as layout.

export const SECTOR = 2048;

/** 16-bit value written little-endian then big-endian (ECMA-119 7.2.3). */
export function both16(buf: Buffer, off: number, v: number): void {
  buf.writeUInt16LE(v, off);
  buf.writeUInt16BE(v, off + 2);
}

/** 32-bit value written little-endian then big-endian (ECMA-119 7.3.3). */
export function both32(buf: Buffer, off: number, v: number): void {
  buf.writeUInt32LE(v, off);
  buf.writeUInt32BE(v, off + 4);
}

/** An ASCII field padded with spaces to `len` bytes. */
export function asciiField(buf: Buffer, off: number, len: number, text: string): void {
  buf.fill(0x20, off, off + len);
  buf.write(text.slice(0, len), off, 'latin1');
}

/** A UCS-2 big-endian field (Joliet) padded with U+0020 to `len` bytes. */
export function ucs2Field(buf: Buffer, off: number, len: number, text: string): void {
  const enc = ucs2be(text).subarray(0, len - (len % 2));
  for (let i = 0; i < len; i += 2) buf.writeUInt16BE(0x20, off + i);
  enc.copy(buf, off);
}

export function ucs2be(text: string): Buffer {
  const out = Buffer.alloc(text.length * 2);
  for (let i = 0; i < text.length; i++) out.writeUInt16BE(text.charCodeAt(i), i * 2);
  return out;
}

/** The 7-byte recording date of a directory record (ECMA-119 9.1.5), in UTC. */
export function recordDate(buf: Buffer, off: number, d: Date): void {
  buf[off] = d.getUTCFullYear() - 1900;
  buf[off + 1] = d.getUTCMonth() + 1;
  buf[off + 2] = d.getUTCDate();
  buf[off + 3] = d.getUTCHours();
  buf[off + 4] = d.getUTCMinutes();
  buf[off + 5] = d.getUTCSeconds();
  buf[off + 6] = 0; // offset from GMT in 15-minute units
}

/** The 17-byte volume descriptor date (ECMA-119 8.4.26.1); undefined means "not specified". */
export function volumeDate(buf: Buffer, off: number, d: Date | undefined): void {
  if (!d) {
    buf.write('0000000000000000', off, 'latin1');
    buf[off + 16] = 0;
    return;
  }
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const s =
    p(d.getUTCFullYear(), 4) +
    p(d.getUTCMonth() + 1) +
    p(d.getUTCDate()) +
    p(d.getUTCHours()) +
    p(d.getUTCMinutes()) +
    p(d.getUTCSeconds()) +
    p(Math.floor(d.getUTCMilliseconds() / 10));
  buf.write(s, off, 'latin1');
  buf[off + 16] = 0;
}

export const sectorsFor = (bytes: number): number => Math.ceil(bytes / SECTOR);
