// bootc_install (and image_write) take only an absolute /dev/ path as the disk to wipe: in the
// argument schema, like the other disk modules, and again at run time for a device that came
// from a registered root_device result (the ramdisk's own lsblk, which the schema never sees).
import { describe, expect, it, vi } from 'vitest';
import { devicePathProblem } from '../../src/module-api/device-path.js';
import { validateArgs } from '../../src/executor/validate-args.js';
import { bootcInstallModule } from '../../src/modules/bootc/bootc_install.js';
import { imageWriteModule } from '../../src/modules/image/image_write.js';
import { eraseDiskMetadataModule } from '../../src/modules/disk/erase_disk_metadata.js';
import { configdriveWriteModule } from '../../src/modules/configdrive/configdrive_write.js';
import { randomName } from '../../src/module-api/ramdisk-exec.js';
import type { ModuleDef } from '../../src/module-api/types.js';
import { ctxRecording } from '../helpers/recording-context.js';
import type { Task } from '../../src/playbook/model.js';

const task = { name: 'Install', argsPos: { file: 'p.yml', line: 3, col: 5 } } as unknown as Task;

describe('disk device paths', () => {
  it('the rule: absolute under /dev/, no option, no relative path, no .. or whitespace', () => {
    for (const ok of ['/dev/sda', '/dev/nvme0n1', '/dev/disk/by-path/pci-0000:00:1f.2-ata-1', '/dev/mapper/vg-root'])
      expect(devicePathProblem(ok)).toBeUndefined();
    for (const bad of ['--help', '-x', 'sda', 'dev/sda', '/tmp/x', '/dev/../etc/passwd', '/dev/sda --wipe', '/dev/', ''])
      expect(devicePathProblem(bad)).toBeDefined();
  });

  it('bootc_install refuses device: --help in its arguments, as the other disk modules do', () => {
    expect(() => validateArgs(bootcInstallModule as unknown as ModuleDef, { device: '--help' }, task, 'node7')).toThrow(/device/);
    expect(() => validateArgs(bootcInstallModule as unknown as ModuleDef, { device: '/dev/sda' }, task, 'node7')).not.toThrow();
  });

  it('bootc_install refuses a registered root device that is not a /dev/ path, before running anything', async () => {
    const { ctx, ran } = ctxRecording({
      instance_info: { image_source: 'oci://r:5000/i:1' },
      root: { device: '--help', size_mib: 10000, reason: 'lsblk said so' },
    });
    await expect(bootcInstallModule.run(ctx, {})).rejects.toThrow(/node7: refusing to install: the device "--help" is not an absolute \/dev\/ path/);
    expect(ran).toEqual([]);
  });

  it('image_write refuses the same, before touching anything', async () => {
    const { ctx, ran } = ctxRecording({
      instance_info: { image_source: 'http://img/x.raw', image_os_hash_algo: 'sha256', image_os_hash_value: 'a'.repeat(64) },
      root: { device: '../sda', size_mib: 10000, reason: 'lsblk said so' },
    });
    await expect(imageWriteModule.run(ctx, {})).rejects.toThrow(/refusing to write: the device "..\/sda" is not an absolute \/dev\/ path/);
    expect(ran).toEqual([]);
  });

  // The schemas of the other disk modules take any "^/dev/" string: /dev/../tmp/x passed them
  // and reached wipefs and dd. The same runtime rule as bootc_install now stops it first.
  it('erase_disk_metadata refuses /dev/../tmp/x before running anything', async () => {
    for (const device of ['/dev/../tmp/x', '/dev/./sda', '/dev/sda --all']) {
      const { ctx, ran } = ctxRecording({});
      expect(() => validateArgs(eraseDiskMetadataModule as unknown as ModuleDef, { device }, task, 'node7')).not.toThrow();
      await expect(eraseDiskMetadataModule.run(ctx, { device })).rejects.toThrow(/node7: refusing to erase: the device .* (has \. or \.\. segments|is not an absolute \/dev\/ path)/);
      expect(ran).toEqual([]);
    }
  });

  it('configdrive_write refuses /dev/../tmp/x before running anything', async () => {
    const { ctx, ran } = ctxRecording({ instance_info: { configdrive: { meta_data: { uuid: 'u' } } } });
    await expect(configdriveWriteModule.run(ctx, { device: '/dev/../tmp/x' })).rejects.toThrow(/node7: refusing to write the config drive: the device "\/dev\/\.\.\/tmp\/x" has \. or \.\. segments/);
    expect(ran).toEqual([]);
  });
});

describe('temporary names on the ramdisk', () => {
  it('come from crypto, not Math.random (whose state a few outputs give away)', () => {
    const spy = vi.spyOn(Math, 'random').mockReturnValue(0.5);
    try {
      const names = new Set(Array.from({ length: 50 }, () => randomName()));
      expect(names.size).toBe(50);
      for (const n of names) expect(n).toMatch(/^[0-9a-f]{24}$/);
      expect(spy).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
    }
  });
});
