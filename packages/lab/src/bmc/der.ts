// The few DER (ASN.1) encodings an X.509 certificate needs: enough to issue the fake BMC's
// throwaway CA and server certificate without the openssl program.

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** A TLV with the given tag byte. */
function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), lengthBytes(content.length), content]);
}

export const sequence = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
export const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));
export const octetString = (b: Buffer): Buffer => tlv(0x04, b);
export const utf8String = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
export const boolean = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));
/** [n] EXPLICIT: a constructed context-specific wrapper. */
export const explicit = (n: number, inner: Buffer): Buffer => tlv(0xa0 | n, inner);
/** [n] IMPLICIT primitive (e.g. GeneralName's dNSName [2] and iPAddress [7]). */
export const implicitPrimitive = (n: number, content: Buffer): Buffer => tlv(0x80 | n, content);

/** A non-negative INTEGER from its big-endian bytes (a leading zero added when the top bit is set). */
export function unsignedInteger(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const trimmed = bytes.subarray(i);
  return tlv(0x02, (trimmed[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

export const smallInteger = (n: number): Buffer => unsignedInteger(Buffer.from([n]));

export function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out: number[] = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const chunk: number[] = [p & 0x7f];
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** A BIT STRING holding whole bytes (no unused bits): keys and signatures. */
export const bitStringBytes = (b: Buffer): Buffer => tlv(0x03, Buffer.concat([Buffer.from([0]), b]));

/**
 * A named-bit BIT STRING (KeyUsage): bit 0 is the most significant bit of the first byte;
 * DER drops trailing zero bits and says how many bits of the last byte are unused.
 */
export function namedBits(bits: number[]): Buffer {
  const top = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(top / 8) + 1);
  for (const b of bits) bytes[b >> 3]! |= 0x80 >> (b & 7);
  return tlv(0x03, Buffer.concat([Buffer.from([7 - (top & 7)]), bytes]));
}

/** UTCTime up to 2049, GeneralizedTime after (RFC 5280 4.1.2.5), to the second, in UTC. */
export function time(d: Date): Buffer {
  const iso = d.toISOString(); // 2026-12-01T12:34:56.789Z
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(digits.slice(2), 'latin1')) : tlv(0x18, Buffer.from(digits, 'latin1'));
}

/** A PEM block of DER bytes. */
export function pem(label: string, der: Buffer): string {
  const b64 = der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}
