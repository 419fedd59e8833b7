// The GPT library of the sgdisk stand-in: CRC32, GUID byte order, and tables that survive a
// write/read round trip, fall back to the backup header, and read right with util-linux/gdisk.
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { crc32 } from '../../packages/lab/src/gpt/crc32.js';
import { loadTable, openDisk, writeTable } from '../../packages/lab/src/gpt/disk-file.js';
import { bytesToGuid, guidToBytes, randomGuid } from '../../packages/lab/src/gpt/guid.js';
import { type GptTable, newTable, SECTOR } from '../../packages/lab/src/gpt/table.js';
import { typeCodeOf, typeGuidFor } from '../../packages/lab/src/gpt/type-codes.js';

const SFDISK = ['/usr/sbin/sfdisk', '/sbin/sfdisk'].find((p) => existsSync(p));
const SGDISK = ['/usr/sbin/sgdisk', '/sbin/sgdisk'].find((p) => existsSync(p));
const MiB = 2048; // sectors

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-gpt-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function disk(mib: number): string {
  const f = join(dir, 'disk');
  closeSync(openSync(f, 'w'));
  truncateSync(f, mib * 1024 * 1024);
  return f;
}

function sample(sectors: number): GptTable {
  const t = newTable(sectors);
  t.entries[0] = {
    typeGuid: typeGuidFor('ef00')!,
    uniqueGuid: randomGuid(),
    firstLba: 2048,
    lastLba: 2048 + 16 * MiB - 1,
    attributes: 0n,
    name: 'EFI-SYSTEM',
  };
  t.entries[1] = {
    typeGuid: typeGuidFor('8304')!,
    uniqueGuid: randomGuid(),
    firstLba: 2048 + 16 * MiB,
    lastLba: 40 * MiB - 1,
    attributes: 4n,
    name: 'röot',
  };
  t.entries[4] = {
    typeGuid: typeGuidFor('8300')!,
    uniqueGuid: randomGuid(),
    firstLba: 40 * MiB,
    lastLba: sectors - 34,
    attributes: 0n,
    name: 'config-2',
  };
  return t;
}

function save(file: string, t: GptTable): void {
  const { fd } = openDisk(file, true);
  writeTable(fd, t);
  closeSync(fd);
}

function load(file: string) {
  const { fd, sectors } = openDisk(file, false);
  try {
    return loadTable(fd, sectors);
  } finally {
    closeSync(fd);
  }
}

describe('GPT primitives', () => {
  it('CRC32 is the IEEE one (check value of "123456789")', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(crc32(Buffer.alloc(0))).toBe(0);
  });

  it('GUIDs keep GPT mixed-endian byte order', () => {
    const g = 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B';
    expect(guidToBytes(g).toString('hex')).toBe('28732ac11ff8d211ba4b00a0c93ec93b');
    expect(bytesToGuid(guidToBytes(g))).toBe(g);
    const r = randomGuid();
    expect(r).toMatch(/^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/);
  });

  it('type codes map both ways; unknown GUIDs show FFFF', () => {
    expect(typeGuidFor('EF00')).toBe('C12A7328-F81F-11D2-BA4B-00A0C93EC93B');
    expect(typeCodeOf('4f68bce3-e8cd-4db1-96e7-fbcaf984b709')).toBe('8304');
    expect(typeGuidFor('zzzz')).toBeUndefined();
    expect(typeCodeOf(randomGuid())).toBe('FFFF');
  });
});

describe('GPT on a disk file', () => {
  it('a written table reads back the same', () => {
    const f = disk(64);
    const t = sample(64 * MiB);
    save(f, t);
    const back = load(f);
    expect(back.source).toBe('primary');
    expect(back.table).toEqual(t);
  });

  it('a blank disk gives a new, empty table', () => {
    const l = load(disk(8));
    expect(l.source).toBe('none');
    expect(l.table.entries.filter(Boolean)).toEqual([]);
    expect([l.table.firstUsable, l.table.lastUsable, l.table.backupLba]).toEqual([
      34,
      8 * MiB - 34,
      8 * MiB - 1,
    ]);
  });

  it('a damaged primary entry array falls back to the backup', () => {
    const f = disk(64);
    const t = sample(64 * MiB);
    save(f, t);
    const fd = openSync(f, 'r+');
    writeSync(fd, Buffer.from('garbage'), 0, 7, 2 * SECTOR + 10);
    closeSync(fd);
    const back = load(f);
    expect(back.source).toBe('backup');
    expect(back.table.entries).toEqual(t.entries);
  });

  it('a backup header left mid-disk (image smaller than the disk) is kept until moved', () => {
    const f = disk(64);
    const t = sample(32 * MiB);
    t.entries[4] = undefined;
    save(f, t);
    const back = load(f);
    expect(back.table.backupLba).toBe(32 * MiB - 1);
    expect(back.table.lastUsable).toBe(32 * MiB - 34);
    expect(back.table.sectors).toBe(64 * MiB);
  });

  it.skipIf(!SFDISK)('util-linux sfdisk reads it (skipped: no sfdisk)', () => {
    const f = disk(64);
    const t = sample(64 * MiB);
    save(f, t);
    const j = JSON.parse(execFileSync(SFDISK!, ['--json', f], { encoding: 'utf8' })) as {
      partitiontable: {
        label: string;
        id: string;
        partitions: { start: number; size: number; type: string; uuid: string; name: string }[];
      };
    };
    expect(j.partitiontable.label).toBe('gpt');
    expect(j.partitiontable.id).toBe(t.diskGuid);
    expect(j.partitiontable.partitions.map((p) => [p.start, p.size, p.type, p.uuid, p.name])).toEqual(
      t.entries
        .filter((e) => e !== undefined)
        .map((e) => [e.firstLba, e.lastLba - e.firstLba + 1, e.typeGuid, e.uniqueGuid, e.name]),
    );
  });

  it.skipIf(!SGDISK)('gdisk verifies its CRCs and structures (skipped: no sgdisk)', () => {
    const f = disk(64);
    save(f, sample(64 * MiB));
    const out = execFileSync(SGDISK!, ['-v', f], { encoding: 'utf8' });
    expect(out).toMatch(/No problems found/);
    expect(out).not.toMatch(/CRC|corrupt|damaged|invalid/i);
  });
});
