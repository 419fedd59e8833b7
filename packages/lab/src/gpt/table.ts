// The GPT as data: header fields and the 128 entries, parsed from and serialized to sectors
// (protective MBR, primary header + entry array, backup entry array + header), with CRC32s.
import { crc32 } from './crc32.js';
import { bytesToGuid, guidToBytes, randomGuid, ZERO_GUID } from './guid.js';

export const SECTOR = 512;
export const ENTRY_COUNT = 128;
const ENTRY_SIZE = 128;
/** Sectors the entry array takes (128 entries x 128 bytes = 32 sectors). */
export const ENTRY_SECTORS = (ENTRY_COUNT * ENTRY_SIZE) / SECTOR;
const HEADER_SIZE = 92;
const NAME_CHARS = 36;

export interface GptEntry {
  typeGuid: string;
  uniqueGuid: string;
  firstLba: number;
  lastLba: number;
  attributes: bigint;
  name: string;
}

export interface GptTable {
  /** Disk size in sectors. */
  sectors: number;
  diskGuid: string;
  firstUsable: number;
  lastUsable: number;
  /** Where the backup header lives (mid-disk after a smaller image was written; `-e` moves it). */
  backupLba: number;
  /** Index i is partition number i + 1; undefined slots are unused. */
  entries: (GptEntry | undefined)[];
}

export function newTable(sectors: number): GptTable {
  return {
    sectors,
    diskGuid: randomGuid(),
    firstUsable: 2 + ENTRY_SECTORS,
    lastUsable: sectors - 2 - ENTRY_SECTORS,
    backupLba: sectors - 1,
    entries: new Array(ENTRY_COUNT).fill(undefined),
  };
}

/** Moves the backup header and entries to the disk's last sectors (`sgdisk -e`). */
export function moveBackupToEnd(t: GptTable): void {
  t.backupLba = t.sectors - 1;
  t.lastUsable = t.sectors - 2 - ENTRY_SECTORS;
}

function encodeEntry(e: GptEntry | undefined): Buffer {
  const b = Buffer.alloc(ENTRY_SIZE);
  if (!e) return b;
  guidToBytes(e.typeGuid).copy(b, 0);
  guidToBytes(e.uniqueGuid).copy(b, 16);
  b.writeBigUInt64LE(BigInt(e.firstLba), 32);
  b.writeBigUInt64LE(BigInt(e.lastLba), 40);
  b.writeBigUInt64LE(e.attributes, 48);
  Buffer.from(e.name.slice(0, NAME_CHARS), 'utf16le').copy(b, 56, 0, NAME_CHARS * 2);
  return b;
}

function encodeEntries(t: GptTable): Buffer {
  return Buffer.concat(t.entries.map(encodeEntry));
}

function encodeHeader(t: GptTable, entriesCrc: number, backup: boolean): Buffer {
  const b = Buffer.alloc(SECTOR);
  b.write('EFI PART', 0, 'latin1');
  b.writeUInt32LE(0x00010000, 8);
  b.writeUInt32LE(HEADER_SIZE, 12);
  b.writeBigUInt64LE(BigInt(backup ? t.backupLba : 1), 24);
  b.writeBigUInt64LE(BigInt(backup ? 1 : t.backupLba), 32);
  b.writeBigUInt64LE(BigInt(t.firstUsable), 40);
  b.writeBigUInt64LE(BigInt(t.lastUsable), 48);
  guidToBytes(t.diskGuid).copy(b, 56);
  b.writeBigUInt64LE(BigInt(backup ? t.backupLba - ENTRY_SECTORS : 2), 72);
  b.writeUInt32LE(ENTRY_COUNT, 80);
  b.writeUInt32LE(ENTRY_SIZE, 84);
  b.writeUInt32LE(entriesCrc, 88);
  b.writeUInt32LE(crc32(b.subarray(0, HEADER_SIZE)), 16);
  return b;
}

/** CHS bytes for an LBA in the 255-head, 63-sector geometry sgdisk uses; past 1024 cylinders, all ones. */
function chs(lba: number): [number, number, number] {
  const c = Math.floor(lba / (255 * 63));
  if (c >= 1024) return [0xff, 0xff, 0xff];
  const rem = lba % (255 * 63);
  return [Math.floor(rem / 63), ((rem % 63) + 1) | ((c >> 2) & 0xc0), c & 0xff];
}

/** A protective MBR: one 0xEE partition over the whole disk (capped at 2^32 - 1 sectors). */
function protectiveMbr(sectors: number): Buffer {
  const b = Buffer.alloc(SECTOR);
  const p = 446;
  b.set(chs(1), p + 1);
  b[p + 4] = 0xee;
  b.set(chs(sectors - 1), p + 5);
  b.writeUInt32LE(1, p + 8);
  b.writeUInt32LE(Math.min(sectors - 1, 0xffffffff), p + 12);
  b[510] = 0x55;
  b[511] = 0xaa;
  return b;
}

export interface SectorWrite {
  lba: number;
  data: Buffer;
}

/** Every write that puts the table on disk: MBR, primary header + entries, backup entries + header. */
export function serialize(t: GptTable): SectorWrite[] {
  const entries = encodeEntries(t);
  const ecrc = crc32(entries);
  return [
    { lba: 0, data: protectiveMbr(t.sectors) },
    { lba: 1, data: encodeHeader(t, ecrc, false) },
    { lba: 2, data: entries },
    { lba: t.backupLba - ENTRY_SECTORS, data: entries },
    { lba: t.backupLba, data: encodeHeader(t, ecrc, true) },
  ];
}

export interface ParsedHeader {
  currentLba: number;
  backupLba: number;
  firstUsable: number;
  lastUsable: number;
  diskGuid: string;
  entriesLba: number;
  count: number;
  entrySize: number;
  entriesCrc: number;
}

/** A header sector's fields, or undefined when its signature or CRC is wrong. */
export function parseHeader(sector: Buffer): ParsedHeader | undefined {
  if (sector.toString('latin1', 0, 8) !== 'EFI PART') return undefined;
  const size = sector.readUInt32LE(12);
  if (size < HEADER_SIZE || size > SECTOR) return undefined;
  const copy = Buffer.from(sector.subarray(0, size));
  const stored = copy.readUInt32LE(16);
  copy.writeUInt32LE(0, 16);
  if (crc32(copy) !== stored) return undefined;
  return {
    currentLba: Number(sector.readBigUInt64LE(24)),
    backupLba: Number(sector.readBigUInt64LE(32)),
    firstUsable: Number(sector.readBigUInt64LE(40)),
    lastUsable: Number(sector.readBigUInt64LE(48)),
    diskGuid: bytesToGuid(sector.subarray(56, 72)),
    entriesLba: Number(sector.readBigUInt64LE(72)),
    count: sector.readUInt32LE(80),
    entrySize: sector.readUInt32LE(84),
    entriesCrc: sector.readUInt32LE(88),
  };
}

/** The entries of an array whose CRC matches the header's, or undefined. */
export function parseEntries(h: ParsedHeader, raw: Buffer): (GptEntry | undefined)[] | undefined {
  if (crc32(raw) !== h.entriesCrc) return undefined;
  const out: (GptEntry | undefined)[] = [];
  for (let i = 0; i < Math.max(h.count, ENTRY_COUNT); i++) {
    if (i >= h.count) {
      out.push(undefined);
      continue;
    }
    const e = raw.subarray(i * h.entrySize, (i + 1) * h.entrySize);
    const typeGuid = bytesToGuid(e.subarray(0, 16));
    if (typeGuid === ZERO_GUID) {
      out.push(undefined);
      continue;
    }
    const name = e.subarray(56, 128).toString('utf16le').replace(/\0.*$/s, '');
    out.push({
      typeGuid,
      uniqueGuid: bytesToGuid(e.subarray(16, 32)),
      firstLba: Number(e.readBigUInt64LE(32)),
      lastLba: Number(e.readBigUInt64LE(40)),
      attributes: e.readBigUInt64LE(48),
      name,
    });
  }
  return out;
}
