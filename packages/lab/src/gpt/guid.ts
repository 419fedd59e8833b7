// GUIDs as GPT stores them: the first three fields little-endian, the last two as bytes.
import { randomBytes } from 'node:crypto';

const GUID_RE = /^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/i;

export function isGuid(s: string): boolean {
  return GUID_RE.test(s);
}

export function guidToBytes(guid: string): Buffer {
  if (!isGuid(guid)) throw new Error(`not a GUID: ${guid}`);
  const h = guid.replace(/-/g, '');
  const le = (s: string) => Buffer.from(s, 'hex').reverse();
  return Buffer.concat([
    le(h.slice(0, 8)),
    le(h.slice(8, 12)),
    le(h.slice(12, 16)),
    Buffer.from(h.slice(16), 'hex'),
  ]);
}

export function bytesToGuid(b: Uint8Array): string {
  const h = Buffer.from(b.subarray(0, 16)).toString('hex');
  const le = (s: string) => Buffer.from(s, 'hex').reverse().toString('hex');
  return `${le(h.slice(0, 8))}-${le(h.slice(8, 12))}-${le(h.slice(12, 16))}-${h.slice(16, 20)}-${h.slice(20)}`.toUpperCase();
}

/** A random (version 4) GUID, as sgdisk gives new disks and partitions. */
export function randomGuid(): string {
  const b = randomBytes(16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`.toUpperCase();
}

export const ZERO_GUID = '00000000-0000-0000-0000-000000000000';
