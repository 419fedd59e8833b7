import { describe, expect, it } from 'vitest';
import { gptBackupAtEnd, type PartitionTable, parseSfdiskJson } from '../../src/configdrive/partition-table.js';
import { placeConfigDrive } from '../../src/configdrive/placement.js';

const MiB = 1024 * 1024;
const TiB = 1024 ** 4;
const gpt = (lastlba: number, parts: { start: number; size: number; name?: string }[]) =>
  parseSfdiskJson(
    JSON.stringify({
      partitiontable: {
        label: 'gpt',
        sectorsize: 512,
        lastlba,
        partitions: parts.map((p, i) => ({ node: `/dev/sda${i + 1}`, type: 'x', ...p })),
      },
    }),
    '/dev/sda',
  );
const dos = (parts: { n: number; start: number; size: number }[]) =>
  parseSfdiskJson(
    JSON.stringify({
      partitiontable: {
        label: 'dos',
        partitions: parts.map((p) => ({
          node: `/dev/nvme0n1p${p.n}`,
          start: p.start,
          size: p.size,
          type: '83',
        })),
      },
    }),
    '/dev/nvme0n1',
  );

describe('configdrive partition table parsing', () => {
  it('numbers, offsets and names from sfdisk --json', () => {
    const t = gpt(2097118, [{ start: 2048, size: 4096, name: 'EFI' }]);
    expect(t.partitions[0]).toMatchObject({
      number: 1,
      offsetBytes: 2048 * 512,
      sizeBytes: 4096 * 512,
      name: 'EFI',
    });
    expect(dos([{ n: 5, start: 10, size: 10 }]).partitions[0]!.number).toBe(5);
  });
  it('no table or garbage is a clear error', () => {
    expect(() => parseSfdiskJson('{}', '/dev/sda')).toThrow(/no partition table/);
    expect(() => parseSfdiskJson('nope', '/dev/sda')).toThrow(/did not print JSON/);
  });
});

describe('configdrive placement', () => {
  const disk = 1024 * MiB;
  const last = disk / 512 - 34;
  it('GPT: a new partition aligned to 1 MiB, ending at the last usable sector', () => {
    const p = placeConfigDrive('/dev/sda', gpt(last, [{ start: 2048, size: 100000 }]), [], disk, 1 * MiB);
    expect(p.action).toBe('create');
    if (p.action !== 'create') return;
    expect(p.number).toBe(2);
    expect(p.startSector % 2048).toBe(0);
    expect(p.startSector + p.sizeSectors - 1).toBe(last);
    expect(p.sizeBytes).toBeGreaterThanOrEqual(64 * MiB);
    expect(p.sizeBytes).toBeLessThan(65 * MiB);
  });
  it('reuses the one config-2 partition; two is an error; too small is an error', () => {
    const t = gpt(last, [
      { start: 2048, size: 131072, name: 'config-2' },
      { start: 200000, size: 131072, name: 'config-2' },
    ]);
    expect(placeConfigDrive('/dev/sda', t, [t.partitions[0]!], disk, MiB)).toEqual({
      action: 'reuse',
      partition: t.partitions[0],
    });
    expect(() => placeConfigDrive('/dev/sda', t, t.partitions, disk, MiB)).toThrow(
      /more than one config-2 partition \(1, 2\)/,
    );
    expect(() => placeConfigDrive('/dev/sda', t, [t.partitions[0]!], disk, 65 * MiB)).toThrow(
      /holds 67108864 bytes/,
    );
  });
  it('GPT: the end of the disk in use is an error naming the partition', () => {
    expect(() =>
      placeConfigDrive('/dev/sda', gpt(last, [{ start: 2048, size: last - 2048 }]), [], disk, MiB),
    ).toThrow(/last 64 MiB are used by partition 1/);
  });
  it('MBR: 4 primaries is an error, 3 is fine; logical partitions do not count', () => {
    const three = dos([
      { n: 1, start: 2048, size: 2048 },
      { n: 2, start: 4096, size: 2048 },
      { n: 3, start: 6144, size: 2048 },
      { n: 5, start: 10000, size: 100 },
    ]);
    const p = placeConfigDrive('/dev/nvme0n1', three, [], disk, MiB);
    expect(p.action === 'create' && p.number).toBe(4);
    const four = dos([1, 2, 3, 4].map((n) => ({ n, start: n * 2048, size: 2048 })));
    expect(() => placeConfigDrive('/dev/nvme0n1', four, [], disk, MiB)).toThrow(/4 primary partitions/);
  });
  it('MBR: on a disk over 2 TiB the partition ends at the 2 TiB limit', () => {
    const p = placeConfigDrive('/dev/sdb', dos([{ n: 1, start: 2048, size: 2048 }]), [], 3 * TiB, MiB);
    expect(p.action).toBe('create');
    if (p.action !== 'create') return;
    expect((p.startSector + p.sizeSectors) * 512).toBe(2 * TiB);
    expect(p.offsetBytes).toBe(2 * TiB - 64 * MiB);
  });
});

describe('gptBackupAtEnd', () => {
  const gpt = (lastLba: number, firstLba = 34, sectorSize = 512): PartitionTable => ({ label: 'gpt', sectorSize, lastLba, firstLba, partitions: [] });
  it('true when lastlba is disk sectors - firstlba (sgdisk -e would change nothing)', () => {
    expect(gptBackupAtEnd(gpt(2097118), 2 ** 30)).toBe(true);
    expect(gptBackupAtEnd(gpt(262138, 6, 4096), 2 ** 30)).toBe(true); // 4K sectors: 4 entry sectors
  });
  it('false for an image written to a bigger disk, for MBR, and when sfdisk did not say', () => {
    expect(gptBackupAtEnd(gpt(98270), 2 ** 30)).toBe(false);
    expect(gptBackupAtEnd({ label: 'dos', sectorSize: 512, partitions: [] }, 2 ** 30)).toBe(false);
    expect(gptBackupAtEnd({ label: 'gpt', sectorSize: 512, lastLba: 2097118, partitions: [] }, 2 ** 30)).toBe(false);
  });
  it('true for a table sfdisk (and so bootc) wrote: partitions from 2048, the entries still 32 sectors', () => {
    expect(gptBackupAtEnd(gpt(2097118, 2048), 2 ** 30)).toBe(true);
    expect(gptBackupAtEnd(gpt(262138, 256, 4096), 2 ** 30)).toBe(true);
    expect(gptBackupAtEnd(gpt(98270, 2048), 2 ** 30)).toBe(false); // an image's table, backup mid-disk
  });
  it('a table with fewer entries than usual (firstlba 6: 4 entry sectors) ends 6 sectors short', () => {
    expect(gptBackupAtEnd(gpt(2097146, 6), 2 ** 30)).toBe(true);
    expect(gptBackupAtEnd(gpt(2097118, 6), 2 ** 30)).toBe(false);
  });
  it('parses firstlba from sfdisk --json', () => {
    const t = parseSfdiskJson(JSON.stringify({ partitiontable: { label: 'gpt', firstlba: 34, lastlba: 2097118, sectorsize: 512, partitions: [] } }), '/dev/vda');
    expect(gptBackupAtEnd(t, 2 ** 30)).toBe(true);
  });
});
