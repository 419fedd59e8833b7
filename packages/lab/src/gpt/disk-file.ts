// Reads and writes a GPT on a disk image file (the simulated lab's node disks are sparse
// files), falling back to the backup header when the primary one is damaged.
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import {
  ENTRY_SECTORS,
  type GptTable,
  newTable,
  parseEntries,
  parseHeader,
  SECTOR,
  serialize,
} from './table.js';

export interface LoadedDisk {
  fd: number;
  table: GptTable;
  /** How the table was found: primary, backup (primary damaged) or none (a new, empty one). */
  source: 'primary' | 'backup' | 'none';
  /** With source backup: which part of the primary GPT was damaged. */
  damaged?: 'header' | 'entries';
}

function readAt(fd: number, lba: number, sectors: number): Buffer {
  const b = Buffer.alloc(sectors * SECTOR);
  readSync(fd, b, 0, b.length, lba * SECTOR);
  return b;
}

export function openDisk(path: string, writable: boolean): { fd: number; sectors: number } {
  const fd = openSync(path, writable ? 'r+' : 'r');
  const size = fstatSync(fd).size;
  if (size < 68 * SECTOR) {
    closeSync(fd);
    throw new Error(`${path} is too small (${size} bytes) to hold a GPT`);
  }
  return { fd, sectors: Math.floor(size / SECTOR) };
}

function tryHeader(fd: number, lba: number, sectors: number): GptTable | undefined {
  if (lba < 1 || lba >= sectors) return undefined;
  const h = parseHeader(readAt(fd, lba, 1));
  if (!h || h.entrySize < 128 || h.count === 0 || h.count * h.entrySize > 1024 * 1024) return undefined;
  if (h.entriesLba + Math.ceil((h.count * h.entrySize) / SECTOR) > sectors) return undefined;
  const raw = readAt(fd, h.entriesLba, Math.ceil((h.count * h.entrySize) / SECTOR)).subarray(
    0,
    h.count * h.entrySize,
  );
  const entries = parseEntries(h, raw);
  if (!entries) return undefined;
  const primary = lba === 1;
  return {
    sectors,
    diskGuid: h.diskGuid,
    firstUsable: h.firstUsable,
    lastUsable: h.lastUsable,
    backupLba: primary ? h.backupLba : h.currentLba,
    entries,
  };
}

/** Loads the GPT of an open disk: the primary, else the backup at the disk end, else a new one. */
export function loadTable(fd: number, sectors: number): LoadedDisk {
  const primary = tryHeader(fd, 1, sectors);
  if (primary) {
    // A backup header pointing past the end cannot be written there: put it at the end.
    if (primary.backupLba >= sectors || primary.lastUsable > primary.backupLba - ENTRY_SECTORS - 1) {
      primary.backupLba = sectors - 1;
      primary.lastUsable = Math.min(primary.lastUsable, sectors - 2 - ENTRY_SECTORS);
    }
    return { fd, table: primary, source: 'primary' };
  }
  const backup = tryHeader(fd, sectors - 1, sectors);
  if (backup) {
    const damaged = parseHeader(readAt(fd, 1, 1)) ? 'entries' : 'header';
    return { fd, table: backup, source: 'backup', damaged };
  }
  return { fd, table: newTable(sectors), source: 'none' };
}

export function writeTable(fd: number, t: GptTable): void {
  for (const w of serialize(t)) writeSync(fd, w.data, 0, w.data.length, w.lba * SECTOR);
}

/** Zeroes the primary header + entries and the backup entries + header; with `mbr`, sector 0 too. */
export function zapGpt(fd: number, t: GptTable, mbr: boolean): void {
  const zero = Buffer.alloc((1 + ENTRY_SECTORS) * SECTOR);
  writeSync(fd, zero, 0, zero.length, 1 * SECTOR);
  writeSync(fd, zero, 0, zero.length, (t.sectors - 1 - ENTRY_SECTORS) * SECTOR);
  if (t.backupLba !== t.sectors - 1 && t.backupLba > ENTRY_SECTORS + 1)
    writeSync(fd, zero, 0, zero.length, (t.backupLba - ENTRY_SECTORS) * SECTOR);
  if (mbr) writeSync(fd, zero, 0, SECTOR, 0);
}
