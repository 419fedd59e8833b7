// qcow2 headers (QEMU's docs/interop/qcow2.txt): the virtual size, and everything that would make
// qemu-img open another file while reading this one: a backing file (a path, or a `json:`
// specification naming any file or protocol), an external data file, header extensions tsbm
// cannot read within the inspected bytes, encryption, and feature bits it does not know.
import { printable, safeSize, u32be, u64be } from './bytes.js';

export const QCOW2_MAGIC = 'QFI\xfb';

const EXT_END = 0;
const EXT_BACKING_FORMAT = 0xe2792aca;
const EXT_DATA_FILE = 0x44415441;

/** Incompatible feature bits qemu-img 7 knows: dirty, corrupt, external data file, compression type, extended L2. */
const KNOWN_INCOMPATIBLE = 0b11111n;
const INCOMPAT_CORRUPT = 1n << 1n;
const INCOMPAT_DATA_FILE = 1n << 2n;

export interface Qcow2Header {
  version: number;
  virtualSize: number | undefined;
  unsafe: string[];
}

/** A file name from the header, said as what it is: `json:` names no file but a qemu specification. */
function quoted(text: string): string {
  return text.startsWith('json:') ? `given as a json: specification ${JSON.stringify(text)}` : JSON.stringify(text);
}

export function parseQcow2(b: Uint8Array): Qcow2Header {
  const unsafe: string[] = [];
  const version = u32be(b, 4) ?? 0;
  const size = u64be(b, 24);
  const virtualSize = safeSize(size);
  if (version !== 2 && version !== 3) {
    unsafe.push(`its qcow2 version is ${version} (qemu-img knows 2 and 3)`);
    return { version, virtualSize, unsafe };
  }
  const headerBytes = version === 3 ? 104 : 72;
  if (b.length < headerBytes) {
    unsafe.push(`its header is cut short (${b.length} of ${headerBytes} bytes)`);
    return { version, virtualSize, unsafe };
  }
  if (size === undefined || virtualSize === undefined) unsafe.push('its virtual size is unreadable or beyond 2^53 bytes');
  const backingOffset = u64be(b, 8) ?? 0n;
  const backingSize = u32be(b, 16) ?? 0;
  if (backingOffset !== 0n || backingSize !== 0) {
    const off = safeSize(backingOffset);
    const name = off !== undefined && off + backingSize <= b.length ? printable(b, off, backingSize, 200) : '';
    unsafe.push(name ? `it names a backing file ${quoted(name)}` : `it names a backing file (at byte ${backingOffset})`);
  }
  const clusterBits = u32be(b, 20) ?? 0;
  if (clusterBits < 9 || clusterBits > 21) unsafe.push(`its cluster size 2^${clusterBits} is outside qcow2's 512 bytes to 2 MiB`);
  if ((u32be(b, 32) ?? 0) !== 0) unsafe.push('it is encrypted');
  let extStart = 72;
  if (version === 3) {
    const incompatible = u64be(b, 72) ?? 0n;
    if (incompatible & INCOMPAT_DATA_FILE) unsafe.push('it keeps its data in an external data file');
    if (incompatible & INCOMPAT_CORRUPT) unsafe.push('it is marked corrupt');
    const unknown = incompatible & ~KNOWN_INCOMPATIBLE;
    if (unknown) unsafe.push(`it sets incompatible feature bits tsbm does not know (0x${unknown.toString(16)})`);
    const headerLength = u32be(b, 100) ?? 0;
    if (headerLength < 104 || headerLength % 8 !== 0) {
      unsafe.push(`its header length ${headerLength} is not valid`);
      return { version, virtualSize, unsafe };
    }
    extStart = headerLength;
  }
  unsafe.push(...extensionProblems(b, extStart));
  return { version, virtualSize, unsafe };
}

/** Walks the header extensions: names a data file or backing format, and refuses a walk that leaves the bytes at hand. */
function extensionProblems(b: Uint8Array, start: number): string[] {
  const out: string[] = [];
  let off = start;
  for (let n = 0; n < 1024; n++) {
    const type = u32be(b, off);
    const len = u32be(b, off + 4);
    if (type === undefined || len === undefined) return [...out, 'its header extensions run past the inspected bytes'];
    if (type === EXT_END) return out;
    const data = off + 8;
    if (data + len > b.length) return [...out, 'its header extensions run past the inspected bytes'];
    if (type === EXT_DATA_FILE) out.push(`it names an external data file ${quoted(printable(b, data, len, 200))}`);
    if (type === EXT_BACKING_FORMAT && printable(b, data, len).startsWith('json')) out.push('its backing format is a json: specification');
    off = data + Math.ceil(len / 8) * 8;
  }
  return [...out, 'it has more than 1024 header extensions'];
}
