// Reads a simulated node's GPT straight from its disk file (no tools, no root), for
// `tsbm sim status` and for booting the "instance" from a deployed disk.
import { open } from 'node:fs/promises';

export interface Partition {
  number: number;
  name: string;
  startBytes: number;
  sizeBytes: number;
  typeGuid: string;
}

export interface DiskLayout {
  table: 'gpt' | 'none';
  partitions: Partition[];
  summary: string;
}

const SECTOR = 512;

function guid(b: Buffer): string {
  const h = b.toString('hex');
  const le = (s: string) => s.match(/../g)!.reverse().join('');
  return `${le(h.slice(0, 8))}-${le(h.slice(8, 12))}-${le(h.slice(12, 16))}-${h.slice(16, 20)}-${h.slice(20)}`.toUpperCase();
}

function human(bytes: number): string {
  const units = ['B', 'K', 'M', 'G', 'T'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v >= 10 || u === 0 ? Math.round(v) : v.toFixed(1)}${units[u]}`;
}

export async function readDiskLayout(file: string): Promise<DiskLayout> {
  let fh: Awaited<ReturnType<typeof open>> | undefined;
  try {
    fh = await open(file, 'r');
    const header = Buffer.alloc(SECTOR);
    await fh.read(header, 0, SECTOR, SECTOR);
    if (header.toString('latin1', 0, 8) !== 'EFI PART') return { table: 'none', partitions: [], summary: 'empty' };
    const entriesLba = Number(header.readBigUInt64LE(72));
    const count = Math.min(header.readUInt32LE(80), 256);
    const size = header.readUInt32LE(84);
    const buf = Buffer.alloc(count * size);
    await fh.read(buf, 0, buf.length, entriesLba * SECTOR);
    const partitions: Partition[] = [];
    for (let i = 0; i < count; i++) {
      const e = buf.subarray(i * size, (i + 1) * size);
      if (e.subarray(0, 16).every((x) => x === 0)) continue;
      const first = Number(e.readBigUInt64LE(32));
      const last = Number(e.readBigUInt64LE(40));
      const name = e.subarray(56, 128).toString('utf16le').replace(/\0.*$/s, '');
      partitions.push({ number: i + 1, name, startBytes: first * SECTOR, sizeBytes: (last - first + 1) * SECTOR, typeGuid: guid(e.subarray(0, 16)) });
    }
    const summary = partitions.length
      ? `gpt: ${partitions.map((p) => `${p.number}:${p.name || '?'} ${human(p.sizeBytes)}`).join(', ')}`
      : 'gpt: no partitions';
    return { table: 'gpt', partitions, summary };
  } catch {
    return { table: 'none', partitions: [], summary: 'unreadable' };
  } finally {
    await fh?.close();
  }
}
