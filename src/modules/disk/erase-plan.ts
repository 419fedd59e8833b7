// Which bytes of a disk to zero so it looks blank to every tool that reads metadata, without
// zeroing the whole disk (Ironic's metadata erase has the same aim). The first and last MiB
// of the disk hold the MBR, both GPT copies and the metadata RAID/LVM keep at the disk end;
// the first and last MiB of each partition hold the file system, LVM, LUKS, swap and md
// signatures, wherever the kernel made no device node for the partition. Pure, so the ranges
// are unit-tested.
import type { PartitionExtent } from '../../module-api/partx-table.js';

export const ERASE_SPAN_BYTES = 1024 * 1024;
const SECTOR = 512;

export interface ByteRange {
  offset: number;
  length: number;
}

/** Sorted, merged, sector-aligned ranges inside [0, diskBytes). */
export function eraseRanges(diskBytes: number, partitions: readonly PartitionExtent[], span = ERASE_SPAN_BYTES): ByteRange[] {
  const raw: ByteRange[] = [];
  const ends = (offset: number, size: number) => {
    const len = Math.min(span, size);
    raw.push({ offset, length: len });
    if (size > span) raw.push({ offset: offset + size - span, length: span });
  };
  ends(0, diskBytes);
  for (const p of partitions) {
    // A partition table may claim space past the end of the disk (an image written to a
    // smaller disk): only what the disk has is written.
    const end = Math.min(p.offsetBytes + p.sizeBytes, diskBytes);
    if (p.offsetBytes >= diskBytes || end <= p.offsetBytes) continue;
    ends(p.offsetBytes, end - p.offsetBytes);
  }
  const aligned = raw
    .map((r) => {
      const start = Math.floor(r.offset / SECTOR) * SECTOR;
      const stop = Math.min(Math.ceil((r.offset + r.length) / SECTOR) * SECTOR, Math.floor(diskBytes / SECTOR) * SECTOR);
      return { offset: start, length: stop - start };
    })
    .filter((r) => r.length > 0)
    .sort((a, b) => a.offset - b.offset);
  const out: ByteRange[] = [];
  for (const r of aligned) {
    const last = out[out.length - 1];
    if (last && r.offset <= last.offset + last.length) {
      last.length = Math.max(last.length, r.offset + r.length - last.offset);
    } else {
      out.push({ ...r });
    }
  }
  return out;
}

/** dd that zeroes one range in place (512-byte blocks: every offset here is a sector boundary). */
export function zeroArgv(device: string, r: ByteRange): string[] {
  return [
    'dd',
    'if=/dev/zero',
    `of=${device}`,
    'bs=512',
    `seek=${r.offset / SECTOR}`,
    `count=${r.length / SECTOR}`,
    'conv=notrunc,fsync',
    'status=none',
  ];
}

/** cmp of one range against zeros: rc 0 when every byte there is zero. */
export function verifyArgv(device: string, r: ByteRange): string[] {
  return ['cmp', '-s', '-n', String(r.length), '-i', `${r.offset}:0`, device, '/dev/zero'];
}
