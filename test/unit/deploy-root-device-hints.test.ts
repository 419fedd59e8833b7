import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Disk, GIB } from '../../src/module-api/disk.js';
import { HintError, chooseRootDevice, hintMatches, parseHints } from '../../src/module-api/root-device-hints.js';
import { thrownBy } from '../helpers/thrown.js';

const disk = (over: Partial<Disk>): Disk => ({
  name: '/dev/sda',
  kname: 'sda',
  type: 'disk',
  sizeBytes: 100 * GIB,
  rotational: false,
  readOnly: false,
  removable: false,
  ...over,
});

const sda = disk({
  name: '/dev/sda',
  kname: 'sda',
  sizeBytes: 500 * GIB,
  model: 'Samsung SSD 870',
  vendor: 'ATA',
  serial: 'S1',
  wwn: '0x5002538e',
  hctl: '0:0:0:0',
  tran: 'sata',
  rotational: false,
});
const sdb = disk({
  name: '/dev/sdb',
  kname: 'sdb',
  sizeBytes: 2000 * GIB,
  model: 'WDC WD20',
  vendor: 'WDC',
  serial: 'W2',
  wwn: '0x50014ee2',
  hctl: '1:0:0:0',
  tran: 'sata',
  rotational: true,
});
const nvme = disk({
  name: '/dev/nvme0n1',
  kname: 'nvme0n1',
  sizeBytes: 256 * GIB,
  model: 'INTEL SSDPEKKW256G8',
  serial: 'N3',
  tran: 'nvme',
});
const loop = disk({ name: '/dev/loop3', kname: 'loop3', type: 'loop', sizeBytes: 8 * GIB });
const sr = disk({ name: '/dev/sr0', kname: 'sr0', type: 'rom', sizeBytes: 1 * GIB, readOnly: true });
const zram = disk({ name: '/dev/zram0', kname: 'zram0', sizeBytes: 16 * GIB });
const ro = disk({ name: '/dev/sdc', kname: 'sdc', sizeBytes: 50 * GIB, readOnly: true });
const tiny = disk({ name: '/dev/vdz', kname: 'vdz', sizeBytes: 2 * GIB });
const all = [sda, sdb, nvme, loop, sr, zram, ro, tiny];

const pick = (hints: Record<string, unknown>, disks = all) =>
  chooseRootDevice(disks, parseHints(hints)).disk.name;

describe('root device hints: parsing', () => {
  it('defaults: == for size, s== for strings, bool for rotational', () => {
    expect(parseHints({ size: 100, model: 'x', rotational: 'false' })).toEqual([
      { name: 'size', op: '==', values: ['100'], source: 'size: 100' },
      { name: 'model', op: 's==', values: ['x'], source: 'model: "x"' },
      { name: 'rotational', op: 'bool', values: ['false'], source: 'rotational: "false"' },
    ]);
  });
  it.each([
    ['>= 100', '>=', ['100']],
    ['<= 100', '<=', ['100']],
    ['> 100', '>', ['100']],
    ['<100', '<', ['100']],
    ['!= 100', '!=', ['100']],
    ['== 100', '==', ['100']],
    ['= 100', '=', ['100']],
    ['<or> 100 <or> 200', '<or>', ['100', '200']],
  ])('size %s', (expr, op, values) => {
    expect(parseHints({ size: expr })[0]).toMatchObject({ op, values });
  });
  it.each([
    ['s== abc', 's=='],
    ['s!= abc', 's!='],
    ['s>= abc', 's>='],
    ['s<= abc', 's<='],
    ['s> abc', 's>'],
    ['s< abc', 's<'],
    ['<in> abc', '<in>'],
  ])('string %s', (expr, op) => {
    expect(parseHints({ model: expr })[0]).toMatchObject({ op, values: ['abc'] });
  });
  it('<all-in> splits words; == and != on strings mean string comparison', () => {
    expect(parseHints({ model: '<all-in> a b' })[0]).toMatchObject({ op: '<all-in>', values: ['a', 'b'] });
    expect(parseHints({ model: '== a' })[0]).toMatchObject({ op: 's==' });
    expect(parseHints({ model: '!= a' })[0]).toMatchObject({ op: 's!=' });
  });
  it('name and by_path get their directories', () => {
    expect(parseHints({ name: 'sda' })[0]?.values).toEqual(['/dev/sda']);
    expect(parseHints({ name: '/dev/sda' })[0]?.values).toEqual(['/dev/sda']);
    expect(parseHints({ by_path: 'pci-0000:00:1f.2-ata-1' })[0]?.values).toEqual([
      '/dev/disk/by-path/pci-0000:00:1f.2-ata-1',
    ]);
  });
  it.each([
    [{ colour: 'red' }, /unknown root device hint "colour"/],
    [{ size: 'abc' }, /positive integer/],
    [{ size: -1 }, /positive integer/],
    [{ size: 's== 10' }, /string operator/],
    [{ model: '>= 10' }, /numeric operator/],
    [{ rotational: 'maybe' }, /true or false/],
    [{ model: ['a'] }, /string or number/],
    [{ size: '<or>' }, /at least one value/],
    ['size', /mapping/],
  ])('rejects %j', (hints, msg) => {
    expect(() => parseHints(hints)).toThrow(msg);
  });
  it('empty hints', () => {
    expect(parseHints(undefined)).toEqual([]);
    expect(parseHints({})).toEqual([]);
    expect(parseHints(null)).toEqual([]);
  });
});

describe('root device hints: matching', () => {
  it.each([
    [{ size: 500 }, '/dev/sda'],
    [{ size: '>= 1000' }, '/dev/sdb'],
    [{ size: '> 500' }, '/dev/sdb'],
    [{ size: '< 300' }, '/dev/nvme0n1'],
    [{ size: '<= 256' }, '/dev/nvme0n1'],
    [{ size: '!= 500' }, '/dev/sdb'],
    [{ size: '= 1500' }, '/dev/sdb'],
    [{ size: '<or> 256 <or> 2000' }, '/dev/sdb'],
    [{ model: 'samsung ssd 870' }, '/dev/sda'],
    [{ model: '<in> INTEL' }, '/dev/nvme0n1'],
    [{ model: '<all-in> WDC WD20' }, '/dev/sdb'],
    [{ vendor: 's!= ATA' }, '/dev/sdb'],
    [{ vendor: '<or> foo <or> WDC' }, '/dev/sdb'],
    [{ serial: 'N3' }, '/dev/nvme0n1'],
    [{ wwn: '0x50014ee2' }, '/dev/sdb'],
    [{ wwn_with_extension: '0x5002538e' }, '/dev/sda'],
    [{ hctl: '1:0:0:0' }, '/dev/sdb'],
    [{ tran: 'nvme' }, '/dev/nvme0n1'],
    [{ rotational: true }, '/dev/sdb'],
    [{ rotational: false, size: '< 400' }, '/dev/nvme0n1'],
    [{ name: 'sdb' }, '/dev/sdb'],
    [{ model: 's> V' }, '/dev/sdb'],
    [{ model: 's< J' }, '/dev/nvme0n1'],
    [{ model: 's>= WDC WD20' }, '/dev/sdb'],
    [{ model: 's<= INTEL SSDPEKKW256G8' }, '/dev/nvme0n1'],
  ])('%j -> %s', (hints, expected) => {
    expect(pick(hints)).toBe(expected);
  });
  it('a name hint selects loop / read-only devices that are otherwise skipped', () => {
    expect(pick({ name: '/dev/loop3' })).toBe('/dev/loop3');
    expect(pick({ name: 'sdc' })).toBe('/dev/sdc');
    expect(() => pick({ size: 8 })).toThrow(HintError); // loop3 is 8 GiB but not a candidate without name
  });
  it('by_path matches only when the disk has it', () => {
    const withPath = { ...sdb, byPath: '/dev/disk/by-path/pci-0000:00:17.0-ata-2' };
    expect(pick({ by_path: 'pci-0000:00:17.0-ata-2' }, [sda, withPath])).toBe('/dev/sdb');
    expect(() => pick({ by_path: 'pci-0000:00:17.0-ata-2' }, [sda, sdb])).toThrow(HintError);
  });
  it('a missing property never matches, whatever the operator', () => {
    expect(hintMatches(disk({}), parseHints({ serial: 's!= X' })[0]!)).toBe(false);
  });
  it('no match lists every disk with its properties', () => {
    const e = thrownBy(() => pick({ size: '> 10000' }));
    const m = (e as Error).message;
    for (const d of all) expect(m).toContain(d.name);
    expect(m).toContain('model=Samsung SSD 870');
    expect(m).toContain('serial=W2');
    expect(m).toContain('[skipped unless named by a hint]');
  });
  it('first match in lsblk order wins', () => {
    expect(pick({ rotational: false })).toBe('/dev/sda');
  });
});

describe('root device: no hints', () => {
  it('smallest disk of at least 4 GiB, skipping loop/sr/zram/read-only', () => {
    const c = chooseRootDevice(all, []);
    expect(c.disk.name).toBe('/dev/nvme0n1');
    expect(c.reason).toMatch(/smallest disk of at least 4 GiB/);
  });
  it('errors when only small or skipped disks exist', () => {
    expect(() => chooseRootDevice([tiny, loop, sr], [])).toThrow(/no disk of at least 4 GiB/);
  });
  it('property: the choice is never smaller than another candidate >= 4 GiB', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 4096 }), { minLength: 1, maxLength: 8 }), (sizes) => {
        const disks = sizes.map((s, i) => disk({ name: `/dev/vd${i}`, kname: `vd${i}`, sizeBytes: s * GIB }));
        const ok = disks.filter((d) => d.sizeBytes >= 4 * GIB);
        if (ok.length === 0) {
          expect(() => chooseRootDevice(disks, [])).toThrow(HintError);
          return;
        }
        const c = chooseRootDevice(disks, []);
        expect(ok.every((d) => d.sizeBytes >= c.disk.sizeBytes)).toBe(true);
      }),
    );
  });
});
