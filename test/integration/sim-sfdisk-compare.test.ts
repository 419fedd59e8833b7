// The sfdisk and partx stand-ins (packages/lab/src/gpt) against util-linux's own on twin disk files:
// the same exit code and the same resulting table, as the real sfdisk and partx read it back,
// and the stand-ins reading any disk as the real ones do. Then what the stand-ins refuse (they
// say so, by name) and the ramdisk wrappers' choice between the real tool and the stand-in.
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runPartx } from '../../packages/lab/src/gpt/partx-run.js';
import { runSfdisk } from '../../packages/lab/src/gpt/sfdisk-run.js';
import { findProgram } from '../../src/util/find-program.js';

const SYSTEM = ['/usr/sbin', '/sbin', '/usr/bin', '/bin'];
const SFDISK = findProgram('sfdisk', SYSTEM);
const PARTX = findProgram('partx', SYSTEM);
const SGDISK = findProgram('sgdisk', SYSTEM);
const ROOT = resolve(import.meta.dirname, '..', '..');
const STANDIN = join(ROOT, 'packages/lab/ramdisk/standin');
const BUILT = ['sfdisk', 'partx'].every((t) => existsSync(join(ROOT, `packages/lab/dist/gpt/${t}-cli.js`)));
const GIB = 1024 ** 3;
const PARTX_COLUMNS = 'NR,START,END,SECTORS,SIZE,NAME,UUID,TYPE,FLAGS,SCHEME';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-sfdisk-cmp-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function blank(name: string, bytes: number): string {
  const f = join(dir, name);
  mkdirSync(join(f, '..'), { recursive: true });
  closeSync(openSync(f, 'w'));
  truncateSync(f, bytes);
  return f;
}

function real(tool: string, args: string[], input?: string) {
  const r = spawnSync(tool, args, { encoding: 'utf8', ...(input !== undefined ? { input } : {}) });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** What the real sfdisk and partx read from a disk, with the file name and random GUIDs left out. */
function readBack(file: string) {
  const json = real(SFDISK!, ['--json', file]);
  const pairs = real(PARTX!, ['-P', '-o', PARTX_COLUMNS.replace(',UUID', ''), file]);
  const plain = (s: string) =>
    s
      .split(file)
      .join('DISK')
      .split('\n')
      .filter((l) => !/"(id|uuid)":/.test(l))
      .join('\n');
  return { json: { ...json, stdout: plain(json.stdout), stderr: plain(json.stderr) }, pairs: { ...pairs, stdout: plain(pairs.stdout), stderr: plain(pairs.stderr) } };
}

// Each case: scripts run in turn (fresh tables and appends), as sfdisk's options and stdin.
const CASES: { name: string; steps: [string[], string][] }[] = [
  {
    name: "bootc's table (sim-bootc's script), then configdrive_write's append",
    steps: [
      [
        ['--no-reread', '--no-tell-kernel', '-q', '--wipe-partitions', 'never'],
        'label: gpt\nsize=512MiB, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name="EFI-SYSTEM"\nsize=400MiB, type=4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709, name="root"\n',
      ],
      [['--append', '--no-reread', '--no-tell-kernel'], 'start=1966080, size=131072, type=0FC63DAF-8483-4772-8E79-3D69D8477DE4, name=config-2\n'],
    ],
  },
  { name: 'sizes with units end on the nearest MiB', steps: [[['-q'], 'label: gpt\nstart=2048, size=1100KiB\nstart=30000, size=3000KiB\nsize=1.5M\n']] },
  { name: 'starts given in sectors or bytes are kept', steps: [[['-q'], 'label: gpt\nstart=3000KiB, size=10\nstart=100000, size=10\n']] },
  { name: 'a start below first-lba is refused', steps: [[['-q'], 'label: gpt\nstart=1000KiB, size=10\n']] },
  { name: 'default starts follow the last partition', steps: [[['-q'], 'label: gpt\nstart=100000, size=10\nsize=10\nstart=2000000, size=10\nstart=10000, size=10\n'], [['-q', '--append'], 'size=10\n']] },
  { name: 'no room after the last partition: the first free block', steps: [[['-q'], 'label: gpt\nstart=2097000, size=10\n,\n']] },
  { name: 'default sizes: to the aligned end, or up to the next partition', steps: [[['-q'], 'label: gpt\nstart=10000, size=10\nstart=5000\nsize=100M\nsize=+10M\n,\n']] },
  { name: 'a last partition too short to align', steps: [[['-q'], 'label: gpt\nstart=2097100\n']] },
  { name: 'the largest partition, and one sector more', steps: [[['-q'], 'label: gpt\nstart=2048,size=2095071\n'], [['-q'], 'label: gpt\nstart=2048,size=2095072\n']] },
  { name: 'overlaps are refused and leave the disk alone', steps: [[['-q'], 'label: gpt\nsize=10\n'], [['-q'], 'label: gpt\nstart=3000, size=10\nstart=2048, size=1M\n'], [['-q', '--append'], 'start=2050, size=10\n']] },
  {
    name: 'types by alias and GUID, names, uuid, attrs, label-id, first-lba',
    steps: [
      [
        ['-q'],
        'label: gpt\nlabel-id: 01234567-89AB-CDEF-0123-456789ABCDEF\nfirst-lba: 34\nsize=10, type=L\nsize=10, type=S, name="a b"\nsize=10 type=H name=x\n/dev/foo4 : size=10, type=U, uuid=11111111-2222-3333-4444-555555555555\nsize=10, type=0fc63daf-8483-4772-8e79-3d69d8477de4, attrs="RequiredPartition GUID:63"\nsize=10, bootable\n',
      ],
    ],
  },
  { name: 'an MBR type on GPT is refused', steps: [[['-q'], 'label: gpt\nsize=10, type=83\n']] },
  { name: 'an unknown field is refused by line', steps: [[['-q'], 'label: gpt\nstart=4096 size=10 bogus=1\n']] },
];

describe.skipIf(!SFDISK || !PARTX)("the sfdisk stand-in against util-linux's sfdisk (both installed)", () => {
  for (const c of CASES) {
    it(c.name, () => {
      const a = blank('a/disk', GIB);
      const b = blank('b/disk', GIB);
      for (const [args, script] of c.steps) {
        const ra = real(SFDISK!, [...args, a], script);
        const rb = runSfdisk([...args, b], () => script);
        expect(rb.code, `${script}\nreal: ${ra.stderr}\nours: ${rb.stderr}`).toBe(ra.code);
        expect(readBack(b)).toEqual(readBack(a));
      }
      // Our own JSON and pairs of our disk read as the real tools read it.
      const jb = real(SFDISK!, ['--json', b]);
      const ob = runSfdisk(['--json', b], () => '');
      expect([ob.code, ob.stdout, ob.stderr]).toEqual([jb.code, jb.stdout, jb.stderr]);
      const pb = real(PARTX!, ['-P', '-o', PARTX_COLUMNS, b]);
      const ours = runPartx(['-P', '-o', PARTX_COLUMNS, b]);
      expect([ours.code, ours.stdout]).toEqual([pb.code, pb.stdout]);
      if (SGDISK && jb.code === 0) expect(real(SGDISK, ['-v', b]).stdout).toMatch(/No problems found/);
    });
  }

  it('reads what the real sfdisk wrote, also with the backup header short of the disk end or the primary damaged', () => {
    const disk = blank('disk', 2 * GIB);
    const made = real(SFDISK!, ['-q', disk], 'label: gpt\nsize=100MiB, name="esp"\nsize=1800MiB, name="img-root"\nsize=64MiB, name="config-2"\n');
    expect(made.code, made.stderr).toBe(0);
    const same = () => {
      const r = real(SFDISK!, ['--json', disk]);
      const o = runSfdisk(['--json', disk], () => '');
      expect([o.code, o.stdout]).toEqual([r.code, r.stdout]);
      // The real one also warns about the protective MBR's size: warnings are not parsed by anyone.
      for (const w of o.stderr.split('\n').filter(Boolean)) expect(r.stderr).toContain(w);
      const p = real(PARTX!, ['-P', '-o', PARTX_COLUMNS, disk]);
      expect(runPartx(['-P', '-o', PARTX_COLUMNS, disk])).toEqual({ code: p.code, stdout: p.stdout, stderr: '' });
    };
    same();
    truncateSync(disk, 4 * GIB); // an image written to a bigger disk
    same();
    expect(runSfdisk(['--json', disk], () => '').stderr).toBe('The backup GPT table is not on the end of the device.\n');
    truncateSync(disk, 2 * GIB);
    const fd = openSync(disk, 'r+');
    writeSync(fd, Buffer.alloc(512), 0, 512, 512); // the primary header gone
    closeSync(fd);
    same();
  });

  it('a disk without a table: the same refusal from both', () => {
    const disk = blank('disk', GIB);
    for (const [tool, ours] of [
      [SFDISK!, runSfdisk(['--json', disk], () => '')],
      [PARTX!, runPartx(['-P', '-o', 'NR', disk])],
    ] as const) {
      const r = real(tool, tool === SFDISK ? ['--json', disk] : ['-P', '-o', 'NR', disk]);
      expect(ours).toEqual(r);
    }
  });
});

describe('what the stand-ins refuse: named, never silently wrong', () => {
  it('MBR tables, options, modes and wipes it does not implement; anything but a disk image file', () => {
    const disk = blank('disk', GIB);
    const cases: [string[], string, RegExp][] = [
      [['-q', disk], 'label: dos\nsize=10\n', /label: dos \(only gpt is\) is not implemented/],
      [['-q', disk], 'size=10\n', /without "label: gpt" .* which has no partition table .* is not implemented/],
      [['-l', disk], '', /option -l is not implemented/],
      [['--wipe-partitions', 'always', disk], 'label: gpt\n', /--wipe-partitions always is not implemented/],
      [['--json', '/dev/null'], '', /\/dev\/null: editing anything but a disk image file is not implemented/],
      [['--append', disk], 'size=10\n', /--append to \S+, which has no GPT is not implemented/],
    ];
    for (const [args, script, why] of cases) {
      const r = runSfdisk(args, () => script);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^sfdisk \(tsbm simulated-lab stand-in\): /);
      expect(r.stderr).toMatch(why);
      expect(r.stderr).toMatch(/apt-get install fdisk/);
    }
    // An MBR (dos) table: neither read nor changed.
    const fd = openSync(disk, 'r+');
    const mbr = Buffer.alloc(512);
    mbr[446 + 4] = 0x83;
    mbr.writeUInt32LE(2048, 446 + 8);
    mbr.writeUInt32LE(4096, 446 + 12);
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    writeSync(fd, mbr, 0, 512, 0);
    closeSync(fd);
    expect(runSfdisk(['--json', disk], () => '').stderr).toMatch(/reading \S+'s MBR \(dos\) partition table is not implemented/);
    expect(runSfdisk(['-q', disk], () => 'label: gpt\n').stderr).toMatch(/changing \S+'s MBR \(dos\) partition table is not implemented/);
    expect(readFileSync(disk).subarray(0, 512).equals(mbr)).toBe(true);
    expect(runPartx(['--show', disk]).stderr).toMatch(/^partx \(tsbm simulated-lab stand-in\): option --show is not implemented/);
    expect(runPartx(['-P', '-o', 'NR,BOGUS', disk])).toEqual({ code: 1, stdout: '', stderr: 'partx: unknown column: BOGUS\n' });
  });

  it('partx -u only checks there is a table: a disk image file has no kernel partitions to update', () => {
    const disk = blank('disk', GIB);
    expect(runPartx(['-u', disk])).toEqual({ code: 1, stdout: '', stderr: `partx: ${disk}: failed to read partition table\n` });
    expect(runSfdisk(['-q', disk], () => 'label: gpt\nsize=10, name="a`$b"\n').code).toBe(0);
    expect(runPartx(['-u', disk])).toEqual({ code: 0, stdout: '', stderr: '' });
    // libsmartcols' quoting in pairs: ` and $ as \xHH.
    expect(runPartx(['-P', '-o', 'NR,NAME', disk]).stdout).toBe('NR="1" NAME="a\\x60\\x24b"\n');
  });
});

describe.skipIf(!BUILT)('the ramdisk wrappers for sfdisk and partx (needs npm run build)', () => {
  it('TSBM_SIM_STANDINS forces the stand-in and records its argv in the node; otherwise the real tool runs where installed', () => {
    const root = join(dir, 'node');
    mkdirSync(join(root, 'sim'), { recursive: true });
    const disk = blank('node/dev/vda', GIB);
    const env = (standins: string) => ({ PATH: '/usr/bin:/bin', TSBM_SIM_STANDINS: standins, TSBM_SIM_ROOT: root, TSBM_SIM_NODE_BIN: process.execPath });
    const script = 'label: gpt\nsize=512MiB, type=U, name="EFI-SYSTEM"\n';
    execFileSync(join(STANDIN, 'sfdisk'), ['-q', disk], { input: script, env: env('sfdisk,partx') });
    const json = JSON.parse(execFileSync(join(STANDIN, 'sfdisk'), ['--json', disk], { encoding: 'utf8', env: env('all') })) as {
      partitiontable: { partitions: { name: string; start: number; size: number }[] };
    };
    expect(json.partitiontable.partitions.map((p) => [p.name, p.start, p.size])).toEqual([['EFI-SYSTEM', 2048, 1048576]]);
    const pairs = execFileSync(join(STANDIN, 'partx'), ['-P', '-o', 'NR,START,SECTORS,NAME,SCHEME', disk], { encoding: 'utf8', env: env('partx') });
    expect(pairs).toBe('NR="1" START="2048" SECTORS="1048576" NAME="EFI-SYSTEM" SCHEME="gpt"\n');
    expect(readFileSync(join(root, 'sim/sfdisk-standin-args'), 'utf8')).toBe(`-q ${disk}\n--json ${disk}\n`);
    expect(readFileSync(join(root, 'sim/partx-standin-args'), 'utf8')).toBe(`-P -o NR,START,SECTORS,NAME,SCHEME ${disk}\n`);
    if (SFDISK) {
      // Not forced and installed: the machine's own sfdisk, which records nothing.
      const out = execFileSync(join(STANDIN, 'sfdisk'), ['--json', disk], { encoding: 'utf8', env: env('') });
      expect(out).toContain('"name": "EFI-SYSTEM"');
      expect(readFileSync(join(root, 'sim/sfdisk-standin-args'), 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
    }
  });
});
