// `sgdisk -p` text, laid out as sgdisk 1.0.9 prints it (callers count its partition rows).
import { computeAlignment, totalFree } from './allocate.js';
import { ENTRY_COUNT, ENTRY_SECTORS, type GptTable, SECTOR } from './table.js';
import { typeCodeOf } from './type-codes.js';

/** Sizes as sgdisk shows them: whole bytes, else one decimal with a binary prefix once past 1024. */
export function ieeeSize(bytes: number): string {
  const prefixes = ['', 'K', 'M', 'G', 'T', 'P', 'E', 'Z'];
  let v = bytes;
  let i = 0;
  while (v > 1024 && i < prefixes.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} bytes` : `${v.toFixed(1)} ${prefixes[i]}iB`;
}

/** `alignment` is the one sgdisk settled on when it loaded the disk (it does not recompute it). */
export function printTable(t: GptTable, device: string, alignment = computeAlignment(t)): string {
  const free = totalFree(t);
  const lines = [
    `Disk ${device}: ${t.sectors} sectors, ${ieeeSize(t.sectors * SECTOR)}`,
    `Sector size (logical): ${SECTOR} bytes`,
    `Disk identifier (GUID): ${t.diskGuid}`,
    `Partition table holds up to ${ENTRY_COUNT} entries`,
    `Main partition table begins at sector 2 and ends at sector ${1 + ENTRY_SECTORS}`,
    `First usable sector is ${t.firstUsable}, last usable sector is ${t.lastUsable}`,
    `Partitions will be aligned on ${alignment}-sector boundaries`,
    `Total free space is ${free} sectors (${ieeeSize(free * SECTOR)})`,
    '',
    'Number  Start (sector)    End (sector)  Size       Code  Name',
  ];
  t.entries.forEach((e, i) => {
    if (!e) return;
    const size = ieeeSize((e.lastLba - e.firstLba + 1) * SECTOR);
    lines.push(
      `${String(i + 1).padStart(4)}${String(e.firstLba).padStart(16)}${String(e.lastLba).padStart(16)}   ${size.padEnd(12)}${typeCodeOf(e.typeGuid)}  ${e.name}`,
    );
  });
  return `${lines.join('\n')}\n`;
}
