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
  partitions: Partition[];
}

interface SfdiskJson {
  partitiontable?: {
    label?: string;
    sectorsize?: number;
    lastlba?: number;
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
    partitions,
  };
}
