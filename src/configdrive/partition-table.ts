// Reads `sfdisk --json` output into what the config drive placement needs: the table type,
// sector size, usable end, and each partition's number, byte offset, size and GPT name.
import { TsbmError } from '../errors.js';

export interface Partition {
  number: number;
  startSector: number;
  sizeSectors: number;
  offsetBytes: number;
  sizeBytes: number;
  type: string;
  /** GPT partition name (PARTLABEL); MBR has none. */
  name?: string;
}

export interface PartitionTable {
  label: 'gpt' | 'dos';
  sectorSize: number;
  /** Last usable sector (GPT lastlba); for MBR, filled from the disk size by the caller. */
  lastLba?: number;
  /** First usable sector (GPT firstlba): 2 + the sectors the partition entries take. */
  firstLba?: number;
  partitions: Partition[];
}

interface SfdiskJson {
  partitiontable?: {
    label?: string;
    sectorsize?: number;
    lastlba?: number;
    firstlba?: number;
    partitions?: { node?: string; start?: number; size?: number; type?: string; name?: string }[];
  };
}

export function parseSfdiskJson(text: string, device: string): PartitionTable {
  let doc: SfdiskJson;
  try {
    doc = JSON.parse(text) as SfdiskJson;
  } catch {
    throw new TsbmError('runtime', `sfdisk --json ${device} did not print JSON`, {
      hint: 'the ramdisk needs util-linux sfdisk 2.27 or newer',
    });
  }
  const pt = doc.partitiontable;
  if (!pt || (pt.label !== 'gpt' && pt.label !== 'dos')) {
    throw new TsbmError(
      'runtime',
      `${device} has ${pt?.label ? `a "${pt.label}" partition table` : 'no partition table'}; a config drive needs GPT or MBR`,
      {
        hint: 'run bootc_install (it partitions the disk) before configdrive_write',
      },
    );
  }
  const sectorSize = pt.sectorsize ?? 512;
  const partitions = (pt.partitions ?? []).map((p): Partition => {
    const number = Number(/(\d+)$/.exec(p.node ?? '')?.[1] ?? Number.NaN);
    const startSector = p.start ?? 0;
    const sizeSectors = p.size ?? 0;
    return {
      number,
      startSector,
      sizeSectors,
      offsetBytes: startSector * sectorSize,
      sizeBytes: sizeSectors * sectorSize,
      type: String(p.type ?? ''),
      ...(p.name ? { name: p.name } : {}),
    };
  });
  return {
    label: pt.label,
    sectorSize,
    ...(pt.lastlba !== undefined ? { lastLba: pt.lastlba } : {}),
    ...(pt.firstlba !== undefined ? { firstLba: pt.firstlba } : {}),
    partitions,
  };
}

/** Sectors the usual 128 entries of 128 bytes take. */
const usualEntrySectors = (sectorSize: number) => Math.ceil((128 * 128) / sectorSize);

/**
 * Whether a GPT's backup header already sits at the end of a disk of `diskBytes`, so `sgdisk -e`
 * would change nothing: the backup header in the last sector, its entries just before it, and
 * the last usable sector before those. The entries take the usual 128 x 128 bytes, or fewer
 * when firstlba leaves no room for that many. firstlba itself is no measure of them: sfdisk,
 * and so bootc, start partitions at 2048 (1 MiB), far past the entries. A table with more
 * entries than usual reads as not at the end, which only costs a harmless `sgdisk -e`.
 */
export function gptBackupAtEnd(table: PartitionTable, diskBytes: number): boolean {
  if (table.label !== 'gpt' || table.lastLba === undefined || table.firstLba === undefined) return false;
  const entrySectors = Math.min(table.firstLba - 2, usualEntrySectors(table.sectorSize));
  return table.lastLba === Math.floor(diskBytes / table.sectorSize) - 2 - entrySectors;
}
