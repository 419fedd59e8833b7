// The image inspector: an image's format read from its first bytes (HEADER_BYTES of them), never
// from its name or what anyone declared, with the virtual size its header claims and whatever
// would make qemu-img read other files. Pure: the controller reads the bytes from a file, a
// ramdisk sends them over the connection (src/modules/image/image-inspect.ts); both judge them here.
import { hasMagic } from './bytes.js';
import { partitionTable } from './partition-table.js';
import { parseQcow2, QCOW2_MAGIC } from './qcow2.js';
import { SIGNATURES } from './signatures.js';
import type { Inspection } from './types.js';

export function inspectImage(header: Uint8Array): Inspection {
  if (hasMagic(header, 0, QCOW2_MAGIC)) {
    const q = parseQcow2(header);
    return { format: 'qcow2', ...(q.virtualSize !== undefined ? { virtualSize: q.virtualSize } : {}), unsafe: q.unsafe };
  }
  // ISO before the partition tables: a hybrid ISO has an MBR too, and is still an ISO.
  for (const s of SIGNATURES) {
    if (!s.matches(header)) continue;
    const size = s.virtualSize?.(header);
    return { format: s.format, ...(size !== undefined ? { virtualSize: size } : {}), unsafe: s.unsafe?.(header) ?? [] };
  }
  const table = partitionTable(header);
  return { format: 'raw', ...(table ? { table } : {}), unsafe: [] };
}

/** "qcow2 (4 GiB virtual)", "raw (GPT)": what was found, for messages. */
export function describeInspection(i: Inspection, fmtBytes: (n: number) => string): string {
  const extra = [i.table?.toUpperCase(), i.virtualSize !== undefined ? `${fmtBytes(i.virtualSize)} virtual` : undefined].filter(Boolean);
  return `${i.format}${extra.length ? ` (${extra.join(', ')})` : ''}`;
}
