import { describe, expect, it } from 'vitest';
import { isCandidate, parseLsblk } from '../../src/module-api/lsblk.js';

describe('lsblk JSON across util-linux versions', () => {
  it('new style: numbers and booleans, padded vendor', () => {
    const [d] = parseLsblk(
      JSON.stringify({
        blockdevices: [
          {
            name: 'sda',
            kname: 'sda',
            path: '/dev/sda',
            size: 107374182400,
            rota: false,
            ro: false,
            rm: false,
            type: 'disk',
            model: 'QEMU HARDDISK   ',
            vendor: 'ATA     ',
            serial: 'QM0001',
            wwn: null,
            hctl: '0:0:0:0',
            tran: 'sata',
          },
        ],
      }),
    );
    expect(d).toMatchObject({
      name: '/dev/sda',
      sizeBytes: 107374182400,
      rotational: false,
      model: 'QEMU HARDDISK',
      vendor: 'ATA',
      hctl: '0:0:0:0',
      tran: 'sata',
    });
    expect(d?.wwn).toBeUndefined();
  });
  it('old style: strings "0"/"1" and string sizes, no path field', () => {
    const [d] = parseLsblk(
      JSON.stringify({
        blockdevices: [
          {
            name: 'vda',
            kname: 'vda',
            size: '8589934592',
            rota: '1',
            ro: '0',
            rm: '0',
            type: 'disk',
            wwn: '0x5000c500a',
          },
        ],
      }),
    );
    expect(d).toMatchObject({
      name: '/dev/vda',
      sizeBytes: 8589934592,
      rotational: true,
      readOnly: false,
      wwn: '0x5000c500a',
      wwnWithExtension: '0x5000c500a',
    });
  });
  it('candidates skip loop, rom, zram, read-only and partitions', () => {
    const ds = parseLsblk(
      JSON.stringify({
        blockdevices: [
          { name: 'loop0', type: 'loop', size: 1 },
          { name: 'sr0', type: 'rom', size: 1 },
          { name: 'zram0', type: 'disk', size: 1 },
          { name: 'sdb', type: 'disk', size: 1, ro: '1' },
          { name: 'sda', type: 'disk', size: 1 },
        ],
      }),
    );
    expect(ds.filter(isCandidate).map((d) => d.name)).toEqual(['/dev/sda']);
  });
  it('rejects non-JSON with a clear message', () => {
    expect(() => parseLsblk('lsblk: unknown option -- O')).toThrow(/not JSON/);
    expect(() => parseLsblk('{}')).toThrow(/blockdevices/);
  });
});
