// configdrive_write against real loop disks on this machine (local connection): GPT create,
// reuse, idempotent rerun, check mode, MBR, no room, two config drives.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { localConnection } from '../../src/connection/local.js';
import { buildIso } from '../../src/configdrive/iso9660.js';
import { parseSfdiskJson } from '../../src/configdrive/partition-table.js';
import { configdriveWriteModule } from '../../src/modules/configdrive/configdrive_write.js';
import { assertOwnLoop, createLoopDisk, detachAll, readAt, sgdiskOwn } from './lab/loopdisk.js';
import { haveTool, isRoot, sh } from './lab/run.js';
import { testContext } from './lab/module-context.js';

const MiB = 1024 * 1024;
const ready = isRoot && ['losetup', 'sgdisk', 'sfdisk', 'isoinfo'].every(haveTool);
const work = mkdtempSync(join(tmpdir(), 'tsbm-cdw-'));
afterAll(() => {
  detachAll();
  rmSync(work, { recursive: true, force: true });
});

const vars = (extra: Record<string, unknown> = {}) => ({
  inventory_hostname: 'node7',
  system_uuid: '0b2c7c8e-0000-4000-8000-000000000007',
  instance_info: { configdrive: { meta_data: { hostname: 'node7.lab' }, user_data: '#cloud-config\n' } },
  ...extra,
});
/** The bytes configdrive_write could touch: the table at the start, the last 66 MiB, the backup GPT. */
const fingerprint = (d: { device: string; sizeBytes: number }) =>
  createHash('sha256')
    .update(readAt(d.device, 0, 2 * MiB))
    .update(readAt(d.device, d.sizeBytes - 66 * MiB, 66 * MiB))
    .digest('hex');
const table = (device: string) => parseSfdiskJson(sh(['sfdisk', '--json', device]).stdout, device);

/** Lays a disk out the way the stand-in bootc does: ESP + root, free space at the end. */
function bootcLikeDisk(sizeMiB: number, freeMiB = 768) {
  const disk = createLoopDisk(sizeMiB * MiB);
  sgdiskOwn(disk.device, [
    '-o',
    '-n',
    '1:0:+64M',
    '-t',
    '1:ef00',
    '-n',
    `2:0:+${sizeMiB - 64 - freeMiB}M`,
    '-t',
    '2:8304',
  ]);
  return disk;
}

function isoFile(device: string, offset: number, length: number, name: string): string {
  const p = join(work, name);
  writeFileSync(p, readAt(device, offset, length));
  return p;
}

describe.skipIf(!ready)(
  'configdrive_write on real loop disks (needs root, losetup, sgdisk, sfdisk, isoinfo)',
  { timeout: 120_000 },
  () => {
    it('GPT: creates config-2 in the last 64 MiB, the ISO reads back with isoinfo; a rerun changes nothing', async () => {
      const disk = bootcLikeDisk(1024);
      const ctx = testContext(localConnection('node7'), vars());
      const r = await configdriveWriteModule.run(ctx, { device: disk.device });
      expect(r.changed).toBe(true);
      expect(r.created).toBe(true);
      const t = table(disk.device);
      const p = t.partitions.find((x) => x.number === r.partition)!;
      expect(p.name).toBe('config-2');
      expect(p.offsetBytes).toBe(r.offset);
      expect(p.offsetBytes).toBeGreaterThanOrEqual(disk.sizeBytes - 66 * MiB);
      expect(p.startSector + p.sizeSectors - 1).toBe(t.lastLba); // backup header moved, partition to the end
      const iso = isoFile(disk.device, p.offsetBytes, Number(r.iso_size), 'gpt.iso');
      expect(execFileSync('isoinfo', ['-d', '-i', iso]).toString()).toContain('Volume id: config-2');
      const meta = JSON.parse(
        execFileSync('isoinfo', ['-R', '-x', '/openstack/latest/meta_data.json', '-i', iso]).toString(),
      );
      expect(meta).toEqual({
        uuid: '0b2c7c8e-0000-4000-8000-000000000007',
        name: 'node7',
        hostname: 'node7.lab',
      });
      // the upload is gone
      expect(sh(['sh', '-c', 'ls /tmp/tsbm-configdrive-* 2>/dev/null || true']).stdout.trim()).toBe('');

      const again = await configdriveWriteModule.run(testContext(localConnection('node7'), vars()), {
        device: disk.device,
      });
      expect(again.changed).toBe(false);
      expect(again.partition).toBe(r.partition);
      expect(table(disk.device).partitions.length).toBe(3);
    });

    it('GPT on a 4Kn disk: config-2 at the planned byte offset (partx counts 512-byte units, the plan 4096)', async () => {
      const disk = createLoopDisk(1024 * MiB, { sectorSize: 4096 });
      sgdiskOwn(disk.device, ['-o', '-n', '1:0:+64M', '-t', '1:ef00', '-n', '2:0:+192M', '-t', '2:8304']);
      const ctx = testContext(localConnection('n'), vars());
      const r = await configdriveWriteModule.run(ctx, { device: disk.device });
      expect(r.created).toBe(true);
      const t = table(disk.device);
      expect(t.sectorSize).toBe(4096);
      const p = t.partitions.find((x) => x.number === r.partition)!;
      expect(p.name).toBe('config-2');
      expect(p.offsetBytes).toBe(r.offset);
      expect(p.startSector + p.sizeSectors - 1).toBe(t.lastLba);
      // Created with sfdisk --append in device sectors (no sgdisk: it syncs every filesystem and
      // sleeps a second); the check after it read the table with partx, not sfdisk.
      // (with the ISO on stdin for dd in the same batch, sfdisk's script comes through printf)
      const create = ctx.commands.findIndex((c) => c.includes('sfdisk') && c.includes('--append'));
      expect(create).toBeGreaterThan(-1);
      expect(ctx.commands.filter((c) => c[0] === 'sgdisk')).toEqual([]);
      const after = ctx.commands.slice(create + 1);
      expect(after).toContainEqual(['partx', '-P', '-o', 'NR,START,SECTORS,NAME,SCHEME', disk.device]);
      expect(after.filter((c) => c[0] === 'sfdisk')).toEqual([]);
      const iso = isoFile(disk.device, p.offsetBytes, Number(r.iso_size), 'gpt4k.iso');
      expect(execFileSync('isoinfo', ['-d', '-i', iso]).toString()).toContain('Volume id: config-2');
    });

    it('reuses an existing config-2 partition with new content', async () => {
      const disk = bootcLikeDisk(512, 128);
      await configdriveWriteModule.run(testContext(localConnection('n'), vars()), { device: disk.device });
      const r = await configdriveWriteModule.run(testContext(localConnection('n'), vars()), {
        device: disk.device,
        configdrive: { meta_data: { changed: 'yes' } },
      });
      expect(r.changed).toBe(true);
      expect(r.created).toBe(false);
      expect(table(disk.device).partitions.length).toBe(3);
      const iso = isoFile(disk.device, Number(r.offset), Number(r.iso_size), 'reuse.iso');
      expect(
        JSON.parse(
          execFileSync('isoinfo', ['-J', '-x', '/openstack/2012-08-10/meta_data.json', '-i', iso]).toString(),
        ).changed,
      ).toBe('yes');
    });

    it('check mode plans without touching the disk', async () => {
      const disk = bootcLikeDisk(512, 128);
      const before = fingerprint(disk);
      const ctx = testContext(localConnection('n'), vars(), { check: true });
      const r = await configdriveWriteModule.run(ctx, { device: disk.device });
      expect(r.changed).toBe(true);
      expect(r.msg).toMatch(/would create/);
      expect(fingerprint(disk)).toBe(before);
      expect(
        ctx.commands.some(
          (c) =>
            c[0] === 'sgdisk' ||
            (c[0] === 'sfdisk' && c.includes('--append')) ||
            (c[0] === 'dd' && c.some((a) => a.startsWith('of=/dev'))),
        ),
      ).toBe(false);
    });

    it('MBR: appends a primary partition at the end', async () => {
      const disk = createLoopDisk(512 * MiB);
      assertOwnLoop(disk.device);
      sh(['sfdisk', '--no-reread', '--no-tell-kernel', disk.device], {
        input: 'label: dos\nstart=2048, size=409600, type=83\n',
      });
      const r = await configdriveWriteModule.run(testContext(localConnection('n'), vars()), {
        device: disk.device,
      });
      const t = table(disk.device);
      expect(t.label).toBe('dos');
      const p = t.partitions.find((x) => x.number === r.partition)!;
      expect(p.number).toBe(2);
      expect(p.offsetBytes + p.sizeBytes).toBe(disk.sizeBytes);
      const iso = isoFile(disk.device, p.offsetBytes, Number(r.iso_size), 'mbr.iso');
      expect(execFileSync('isoinfo', ['-d', '-i', iso]).toString()).toContain('Volume id: config-2');
    });

    it('no room at the end of the disk is a clear error and nothing is written', async () => {
      const disk = createLoopDisk(256 * MiB);
      sgdiskOwn(disk.device, ['-o', '-n', '1:0:0']);
      const before = fingerprint(disk);
      await expect(
        configdriveWriteModule.run(testContext(localConnection('n'), vars()), { device: disk.device }),
      ).rejects.toThrow(/last 64 MiB are used by partition 1/);
      expect(fingerprint(disk)).toBe(before);
    });

    it('two config-2 partitions are an error', async () => {
      const disk = createLoopDisk(512 * MiB);
      sgdiskOwn(disk.device, [
        '-o',
        '-n',
        '1:0:+64M',
        '-c',
        '1:config-2',
        '-n',
        '2:0:+64M',
        '-c',
        '2:config-2',
      ]);
      await expect(
        configdriveWriteModule.run(testContext(localConnection('n'), vars()), { device: disk.device }),
      ).rejects.toThrow(/more than one config-2 partition \(1, 2\)/);
    });

    it('finds a config drive by its ISO label even without a GPT name', async () => {
      const disk = createLoopDisk(512 * MiB);
      sgdiskOwn(disk.device, ['-o', '-n', '1:0:+100M', '-n', '2:0:+64M']);
      const p2 = table(disk.device).partitions.find((p) => p.number === 2)!;
      const iso = join(work, 'old.iso');
      writeFileSync(
        iso,
        buildIso([{ path: 'openstack/latest/meta_data.json', data: Buffer.from('{}') }], {
          volumeId: 'config-2',
        }),
      );
      assertOwnLoop(disk.device);
      sh([
        'dd',
        `if=${iso}`,
        `of=${disk.device}`,
        'oflag=seek_bytes',
        `seek=${p2.offsetBytes}`,
        'conv=fsync',
        'status=none',
      ]);
      const r = await configdriveWriteModule.run(testContext(localConnection('n'), vars()), {
        device: disk.device,
      });
      expect(r.partition).toBe(2);
      expect(r.created).toBe(false);
    });

    it('without instance_info.configdrive the task is skipped', async () => {
      const r = await configdriveWriteModule.run(
        testContext(localConnection('n'), { inventory_hostname: 'n' }),
        { device: '/dev/null' },
      );
      expect(r.skipped).toBe(true);
    });

    it('the lab refuses to write a device it did not attach', () => {
      expect(() => sgdiskOwn('/dev/sda', ['-o'])).toThrow(/refusing to touch \/dev\/sda/);
      expect(() => readAt('/dev/loop999', 0, 1)).toThrow(/refusing/);
    });
  },
);
