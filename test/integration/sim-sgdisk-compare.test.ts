// The sgdisk stand-in against gdisk's own sgdisk on twin disk files: same exit code, same
// messages, same resulting table (as the real sgdisk prints it), byte-identical disks where no
// random GUID is involved. Also the ramdisk wrapper's choice between the two.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runSgdisk } from '../../packages/lab/src/gpt/sgdisk-run.js';

const SGDISK = ['/usr/sbin/sgdisk', '/sbin/sgdisk'].find((p) => existsSync(p));
const ROOT = resolve(import.meta.dirname, '..', '..');
const WRAPPER = join(ROOT, 'packages/lab/ramdisk/standin/sgdisk');
const CLI = join(ROOT, 'packages/lab/dist/gpt/sgdisk-cli.js');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-sgdisk-cmp-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function blank(name: string, bytes: number): string {
  const f = join(dir, name);
  closeSync(openSync(f, 'w'));
  truncateSync(f, bytes);
  return f;
}

function real(args: string[]) {
  const r = spawnSync(SGDISK!, args, { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The table as the real sgdisk prints it, without the lines naming the file and the random disk GUID. */
function table(file: string): string {
  return execFileSync(SGDISK!, ['-p', file], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => !l.startsWith('Disk '))
    .join('\n');
}

function same(a: string, b: string): boolean {
  return spawnSync('cmp', ['-s', a, b]).status === 0;
}

/** Runs the same arguments on twin files ("a" with gdisk, "b" with the stand-in). */
function twin(args: string[], a: string, b: string) {
  const ra = real([...args, a]);
  const rb = runSgdisk([...args, b]);
  const unname = (s: string, f: string) => s.split(f).join('DISK');
  return {
    real: { ...ra, stdout: unname(ra.stdout, a), stderr: unname(ra.stderr, a) },
    ours: { ...rb, stdout: unname(rb.stdout, b), stderr: unname(rb.stderr, b) },
  };
}

const CASES: string[][] = [
  [
    '-n',
    '1:0:+512M',
    '-t',
    '1:ef00',
    '-c',
    '1:EFI-SYSTEM',
    '-n',
    '2:0:+2800M',
    '-t',
    '2:8304',
    '-c',
    '2:root',
  ],
  ['-n', '1:2048:+16M', '-t', '1:ef00', '-c', '1:esp', '-n', '2:0:0', '-c', '2:root'],
  ['-n', '1:0:+1000K', '-n', '2:0:+1000K', '-n', '0:0:0', '-n', '0:0:0'],
  ['-n', '1:2049:+1M', '-n', '2:10M:20M', '-n', '3:0:-10M'],
  ['-n', '1:100:200'],
  ['-n', '1:0:+8G'],
  ['-n', '1:0:0', '-t', '1:zzzz'],
  ['-n', '1:0:0', '-c', '2:foo'],
  ['-t', '1:ef00', '-c', '1:x', '-n', '1:0:0'],
  ['-n', '1:0:0', '-n', '1:0:0'],
  ['-Z', '-n', '1:0:0', '-p'],
  ['-o', '-n', '1:0:0', '-d', '1', '-d', '2'],
  ['-e'],
  ['-p'],
  ['--new=1:0:+1G', '--typecode=1:8300', '--change-name=1:config-2', '--print'],
];

describe.skipIf(!SGDISK)(
  'sgdisk stand-in matches gdisk 1.0.9 (skipped: no gdisk here to compare with)',
  () => {
    it.each(CASES.map((c) => [c.join(' '), c]))('%s', (_name, args) => {
      const a = blank('a', 4 * 1024 ** 3);
      const b = blank('b', 4 * 1024 ** 3);
      const { real: ra, ours: rb } = twin(args as string[], a, b);
      expect(rb.code).toBe(ra.code);
      expect(rb.stderr).toBe(ra.stderr);
      const noGuid = (s: string) => s.replace(/Disk identifier \(GUID\): \S+/g, 'Disk identifier (GUID): X');
      expect(noGuid(rb.stdout)).toBe(noGuid(ra.stdout));
      expect(table(b)).toBe(table(a));
    });

    it('-e after an image smaller than the disk, then a config drive at the end: the same disk as gdisk makes', () => {
      const img = blank('img', 48 * 1024 * 1024);
      execFileSync(
        SGDISK!,
        ['-n', '1:2048:+16M', '-t', '1:ef00', '-c', '1:esp', '-n', '2:0:0', '-c', '2:root', img],
        { stdio: 'ignore' },
      );
      truncateSync(img, 1024 ** 3);
      const a = join(dir, 'a');
      const b = join(dir, 'b');
      copyFileSync(img, a);
      copyFileSync(img, b);
      // Before -e the stand-in reads the mid-disk backup's limits exactly as gdisk does.
      expect(runSgdisk(['-p', b]).stdout.replace(b, 'DISK')).toBe(real(['-p', a]).stdout.replace(a, 'DISK'));
      const e = twin(['-e'], a, b);
      expect(e.ours).toEqual(e.real);
      expect(same(a, b)).toBe(true);
      const n = twin(['-n', '3:1966080:2097118', '-c', '3:config-2'], a, b);
      expect(n.ours).toEqual(n.real);
      expect(table(b)).toBe(table(a));
      const v = execFileSync(SGDISK!, ['-v', b], { encoding: 'utf8' });
      expect(v).toMatch(/No problems found/);
      const z = twin(['--zap-all'], a, b);
      expect(z.ours).toEqual(z.real);
      expect(same(a, b)).toBe(true);
    });

    it.each([
      ['main header', 512 + 8],
      ['main entry array', 2 * 512 + 40],
    ])(
      'a damaged %s: the same cautions, the table from the backup, the same repaired disk after -e',
      (_what, offset) => {
        const a = blank('a', 100 * 1024 * 1024);
        execFileSync(SGDISK!, ['-n', '1:0:+10M', '-c', '1:one', '-n', '2:0:0', a], { stdio: 'ignore' });
        const fd = openSync(a, 'r+');
        writeSync(fd, Buffer.from('XXXX'), 0, 4, offset);
        closeSync(fd);
        const b = join(dir, 'b');
        copyFileSync(a, b);
        const p = twin(['-p'], a, b);
        expect(p.ours).toEqual(p.real);
        const e = twin(['-e'], a, b);
        expect(e.ours).toEqual(e.real);
        expect(same(a, b)).toBe(true);
      },
    );

    it('a disk too small for 2048-sector alignment: the partition starts at 34, -p keeps the alignment found at load', () => {
      const a = blank('a', 1024 * 1024);
      const b = blank('b', 1024 * 1024);
      const n = twin(['-n', '1:0:0', '-p'], a, b);
      const noGuid = (s: string) => s.replace(/Disk identifier \(GUID\): \S+/g, '');
      expect(noGuid(n.ours.stdout)).toBe(noGuid(n.real.stdout));
      expect(table(b)).toBe(table(a)); // reloaded: now 2-sector alignment, as gdisk computes it
      expect(table(b)).toMatch(/aligned on 2-sector/);
    });

    it('a disk that does not exist: exit 2 and the same message', () => {
      const { real: ra, ours: rb } = twin([], join(dir, 'missing'), join(dir, 'missing'));
      expect(rb).toEqual(ra);
    });
  },
);

describe('the ramdisk sgdisk wrapper', () => {
  it.skipIf(!existsSync(CLI))(
    'TSBM_SIM_STANDINS=sgdisk runs the stand-in and records its argv in the node (needs npm run build)',
    () => {
      const root = join(dir, 'node');
      execFileSync('mkdir', ['-p', join(root, 'sim'), join(root, 'dev')]);
      const disk = blank('node/dev/vda', 64 * 1024 * 1024);
      const env = {
        PATH: '/usr/bin:/bin',
        TSBM_SIM_STANDINS: 'sgdisk',
        TSBM_SIM_ROOT: root,
        TSBM_SIM_NODE_BIN: process.execPath,
      };
      const out = execFileSync(WRAPPER, ['-n', '1:0:0', '-c', '1:root', '-p', disk], {
        encoding: 'utf8',
        env,
      });
      expect(out).toMatch(/^ {3}1 {12}2048 {10}131038 {3}63\.0 MiB {4}8300 {2}root$/m);
      expect(readFileSync(join(root, 'sim/sgdisk-standin-args'), 'utf8')).toBe(`-n 1:0:0 -c 1:root -p ${disk}\n`);
    },
  );

  it('an option the stand-in does not implement fails loudly (exit 1), not silently', () => {
    const r = runSgdisk(['-A', '1:set:2', blank('x', 1024 * 1024)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/unknown option -A/);
  });
});
