// Where the config drive goes: an existing `config-2` partition, or a new one in the last
// 64 MiB of the disk. GPT and MBR rules follow ironic-python-agent (one config drive at most;
// MBR: no more than 3 existing primaries, and nothing past the 2 TiB an MBR can address).
import { TsbmError } from '../errors.js';
import type { Partition, PartitionTable } from './partition-table.js';

const CONFIG_PARTITION_BYTES = 64 * 1024 * 1024;
const ALIGN_BYTES = 1024 * 1024;
const MBR_LIMIT_SECTORS = 2 ** 32; // 32-bit LBA fields

export type Placement =
  | { action: 'reuse'; partition: Partition }
  | {
      action: 'create';
      label: 'gpt' | 'dos';
      number: number;
      startSector: number;
      sizeSectors: number;
      offsetBytes: number;
      sizeBytes: number;
    };

function fail(device: string, message: string, hint: string): never {
  throw new TsbmError('runtime', `${device}: ${message}`, { hint });
}

/**
 * Decides the partition. `configLabelled` are the partitions already known to be config
 * drives (GPT name or ISO volume id `config-2`); `diskBytes` is the whole device size.
 */
export function placeConfigDrive(
  device: string,
  table: PartitionTable,
  configLabelled: Partition[],
  diskBytes: number,
  isoBytes: number,
): Placement {
  if (configLabelled.length > 1) {
    fail(
      device,
      `more than one config-2 partition (${configLabelled.map((p) => p.number).join(', ')})`,
      'remove the extra config drive partitions (or wipe the disk) and run again',
    );
  }
  const existing = configLabelled[0];
  if (existing) {
    if (existing.sizeBytes < isoBytes) {
      fail(
        device,
        `the existing config-2 partition ${existing.number} holds ${existing.sizeBytes} bytes, the image is ${isoBytes}`,
        'make the config drive smaller or remove that partition',
      );
    }
    return { action: 'reuse', partition: existing };
  }

  const ss = table.sectorSize;
  const align = ALIGN_BYTES / ss;
  const size = CONFIG_PARTITION_BYTES / ss;
  let endExclusive: number; // first sector after the usable area
  if (table.label === 'gpt') {
    endExclusive = (table.lastLba ?? Math.floor(diskBytes / ss) - 34) + 1;
  } else {
    const primaries = table.partitions.filter((p) => p.number >= 1 && p.number <= 4);
    if (primaries.length > 3) {
      fail(
        device,
        'the MBR already has 4 primary partitions; a config drive needs a free one',
        'use GPT or leave a primary partition free',
      );
    }
    endExclusive = Math.min(Math.floor(diskBytes / ss), MBR_LIMIT_SECTORS);
  }
  const startSector = Math.floor((endExclusive - size) / align) * align;
  const sizeSectors = endExclusive - startSector;
  const overlap = table.partitions.find(
    (p) => p.startSector + p.sizeSectors > startSector && p.startSector < endExclusive,
  );
  if (overlap) {
    fail(
      device,
      `the last 64 MiB${table.label === 'dos' && endExclusive === MBR_LIMIT_SECTORS ? ' below 2 TiB' : ''} are used by partition ${overlap.number}; no room for a config drive`,
      'leave 64 MiB free at the end of the disk (bootc_install does with --root-size = disk - 768 MiB)',
    );
  }
  const used = new Set(table.partitions.map((p) => p.number));
  let number = 1;
  while (used.has(number)) number++;
  if (table.label === 'dos' && number > 4) fail(device, 'no free primary partition slot', 'use GPT');
  return {
    action: 'create',
    label: table.label,
    number,
    startSector,
    sizeSectors,
    offsetBytes: startSector * ss,
    sizeBytes: sizeSectors * ss,
  };
}
