// The ISO writer checked by real readers: isoinfo (Rock Ridge, Joliet, plain), xorriso, blkid,
// and a loop mount when the kernel has iso9660.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { buildIso, isIso9660, isoVolumeId } from '../../src/configdrive/iso9660.js';

const have = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
const tools = have('isoinfo') && have('xorriso') && have('blkid');
const work = mkdtempSync(join(tmpdir(), 'tsbm-iso-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let n = 0;
function writeIso(files: { path: string; data: Buffer }[]): string {
  const p = join(work, `t${n++}.iso`);
  writeFileSync(p, buildIso(files, { volumeId: 'config-2', date: new Date('2026-01-02T03:04:05Z') }));
  return p;
}
const run = (cmd: string, args: string[]) =>
  execFileSync(cmd, args, { maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });

const configDrive = [
  { path: 'openstack/2012-08-10/meta_data.json', data: Buffer.from('{"uuid":"u-1","name":"node1"}') },
  { path: 'openstack/latest/meta_data.json', data: Buffer.from('{"uuid":"u-1","name":"node1"}') },
  { path: 'openstack/latest/network_data.json', data: Buffer.from('{"links":[]}') },
  { path: 'openstack/latest/user_data', data: Buffer.from('#cloud-config\nhostname: node1\n') },
  { path: 'openstack/latest/vendor_data2.json', data: Buffer.from('{}') },
];

/** Reads every file of an ISO back with xorriso (Rock Ridge), as a path -> content map. */
function extractAll(iso: string): Map<string, Buffer> {
  const dir = mkdtempSync(join(work, 'x-'));
  run('xorriso', ['-osirrox', 'on', '-indev', iso, '-extract', '/', dir]);
  const out = new Map<string, Buffer>();
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      if (statSync(full).isDirectory()) walk(full, r);
      else out.set(r, readFileSync(full));
    }
  };
  walk(dir, '');
  rmSync(dir, { recursive: true, force: true });
  return out;
}

describe.skipIf(!tools)(
  'configdrive iso9660 writer read by real tools (needs isoinfo, xorriso, blkid)',
  () => {
    it('isoinfo -d reports volume id config-2, Joliet and Rock Ridge', () => {
      const iso = writeIso(configDrive);
      const d = run('isoinfo', ['-d', '-i', iso]).toString();
      expect(d).toMatch(/Volume id: config-2\n/);
      expect(d).toContain('Joliet with UCS level 3 found');
      expect(d).toContain('Rock Ridge signatures version 1 found');
      expect(d).toMatch(/Logical block size is: 2048/);
      const size = Number(/Volume size is: (\d+)/.exec(d)?.[1]);
      expect(size * 2048).toBe(statSync(iso).size);
    });

    it('Rock Ridge listing shows the exact names and modes', () => {
      const l = run('isoinfo', ['-R', '-l', '-i', writeIso(configDrive)]).toString();
      for (const name of [
        '2012-08-10',
        'latest',
        'meta_data.json',
        'network_data.json',
        'user_data',
        'vendor_data2.json',
      ]) {
        expect(l).toMatch(new RegExp(` ${name.replace('.', '\\.')} *\\n`));
      }
      expect(l).toMatch(/-r--r--r-- .* meta_data\.json/);
      expect(l).toMatch(/dr-xr-xr-x .* 2012-08-10/);
    });

    it('isoinfo -J -x and -R -x extract each file byte for byte', () => {
      const iso = writeIso(configDrive);
      for (const f of configDrive) {
        expect(run('isoinfo', ['-J', '-x', `/${f.path}`, '-i', iso])).toEqual(f.data);
        expect(run('isoinfo', ['-R', '-x', `/${f.path}`, '-i', iso])).toEqual(f.data);
      }
    });

    it('plain ISO 9660 readers see unique upper-case names', () => {
      const iso = writeIso([
        { path: 'vendor_data.json', data: Buffer.from('a') },
        { path: 'vendor_data.jsonx', data: Buffer.from('b') },
        { path: 'Vendor_Data.json', data: Buffer.from('c') },
      ]);
      const l = run('isoinfo', ['-l', '-i', iso]).toString();
      const names = [...l.matchAll(/\] {2}(\S+) *$/gm)]
        .map((m) => m[1])
        .filter((x) => x !== '.' && x !== '..');
      expect(new Set(names).size).toBe(3);
      for (const nm of names) expect(nm).toMatch(/^[A-Z0-9_]+\.[A-Z0-9_]*;1$/);
      expect([...extractAll(iso).keys()].sort()).toEqual([
        'Vendor_Data.json',
        'vendor_data.json',
        'vendor_data.jsonx',
      ]);
    });

    it('blkid reports the label config-2 and type iso9660', () => {
      const out = run('blkid', ['-o', 'export', writeIso(configDrive)]).toString();
      expect(out).toContain('LABEL=config-2');
      expect(out).toContain('TYPE=iso9660');
    });

    it('xorriso -find lists the tree; large and empty files and many entries round-trip', () => {
      const big = Buffer.alloc(3 * 2048 + 17, 7);
      const many = Array.from({ length: 120 }, (_, i) => ({
        path: `many/file-with-a-long-name-${i}.txt`,
        data: Buffer.from(String(i)),
      }));
      const files = [
        ...configDrive,
        { path: 'big.bin', data: big },
        { path: 'empty', data: Buffer.alloc(0) },
        ...many,
      ];
      const iso = writeIso(files);
      const found = run('xorriso', ['-indev', iso, '-find', '/openstack']).toString();
      expect(found).toContain("'/openstack/2012-08-10/meta_data.json'");
      const back = extractAll(iso);
      expect(back.size).toBe(files.length);
      for (const f of files) expect(back.get(f.path)).toEqual(f.data);
    });

    it('recognises its own output as ISO 9660 and reads the volume id', () => {
      const data = readFileSync(writeIso(configDrive));
      expect(isIso9660(data)).toBe(true);
      expect(isoVolumeId(data)).toBe('config-2');
      expect(isIso9660(Buffer.alloc(40000))).toBe(false);
    });

    const canMount =
      process.getuid?.() === 0 && readFileSync('/proc/filesystems', 'utf8').includes('iso9660');
    it.skipIf(!canMount)(
      'mount -o loop,ro shows the Rock Ridge names (needs root and iso9660 in the kernel)',
      () => {
        const iso = writeIso(configDrive);
        const mnt = mkdtempSync(join(work, 'mnt-'));
        run('mount', ['-o', 'loop,ro', iso, mnt]);
        try {
          for (const f of configDrive) expect(readFileSync(join(mnt, f.path))).toEqual(f.data);
        } finally {
          run('umount', [mnt]);
        }
      },
    );

    it('property: any small set of legal names round-trips through xorriso and isoinfo -J', () => {
      const seg = fc.stringMatching(/^[A-Za-z0-9_.~+=,@-]{1,20}$/).filter((s) => s !== '.' && s !== '..');
      const fileArb = fc.record({
        path: fc.array(seg, { minLength: 1, maxLength: 4 }).map((p) => p.join('/')),
        data: fc.uint8Array({ maxLength: 5000 }).map((u) => Buffer.from(u)),
      });
      // Reject sets where one path is a prefix directory of another file, or repeats.
      const consistent = (fs: { path: string }[]) =>
        fs.every((a, i) =>
          fs.every((b, j) => i === j || (a.path !== b.path && !b.path.startsWith(`${a.path}/`))),
        );
      fc.assert(
        fc.property(fc.array(fileArb, { minLength: 1, maxLength: 6 }).filter(consistent), (files) => {
          const iso = writeIso(files);
          const back = extractAll(iso);
          expect(back.size).toBe(files.length);
          for (const f of files) {
            expect(back.get(f.path)).toEqual(f.data);
            expect(run('isoinfo', ['-J', '-x', `/${f.path}`, '-i', iso])).toEqual(f.data);
          }
          rmSync(iso);
        }),
        { numRuns: 25 },
      );
    });
  },
);

describe('configdrive iso9660 writer rejects what it cannot store', () => {
  it.each([
    ['a/../b', /"\.\." path component/],
    ['a;b', /Joliet/],
    ['x'.repeat(65), /longer than 64/],
    ['a/b/c/d/e/f/g/h/i', /levels deep/],
  ])('%s', (path, re) => {
    expect(() => buildIso([{ path, data: Buffer.alloc(1) }], { volumeId: 'config-2' })).toThrow(re);
  });
  it('a path that is both a file and a directory', () => {
    expect(() =>
      buildIso(
        [
          { path: 'a', data: Buffer.alloc(1) },
          { path: 'a/b', data: Buffer.alloc(1) },
        ],
        { volumeId: 'config-2' },
      ),
    ).toThrow(/both a file and a directory/);
  });
  it('a volume id longer than 16 characters', () => {
    expect(() => buildIso([], { volumeId: 'x'.repeat(17) })).toThrow(/volume id/);
  });
});
