// The simulated `bootc install to-disk` (packages/lab/ramdisk/bin/sim-bootc, sourced by the simulated
// podman) writes its GPT with sfdisk (as bootc does) once per lab, disk size and root size, and
// copies that table from the lab's cache ($TSBM_SIM_CACHE) onto every later node's disk: fewer
// processes per node in the 1000-node lab. It never runs sgdisk (whose sync and one-second sleep
// after writing made a third of a 1000-node lab miss the template). The tables must be valid
// GPTs with the requested layout and the header geometry the template copy relies on, a new root
// size must get its own template, an older table must be replaced, the refusals must stay as they
// were, and a lab forced onto the TypeScript sgdisk stand-in must install all the same. The tools
// run here as the ramdisk runs them (the node's env file, sandbox root and PATH), without a
// playbook around them.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forceStandins } from '../helpers/force-standins.js';
import { runSfdisk } from '../../packages/lab/src/gpt/sfdisk-run.js';
import { readDiskLayout } from '../../packages/lab/src/lab/disk-layout.js';
import { SIM_IMAGES } from '../../packages/lab/src/lab/images.js';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import type { SimNode } from '../../packages/lab/src/lab/node.js';
import { RAMDISK_TOOLS_DIR, STANDIN_DIR } from '../../packages/lab/src/lab/package-paths.js';

const SFDISK = ['/usr/sbin/sfdisk', '/sbin/sfdisk'].find((p) => existsSync(p));
const SGDISK = ['/usr/sbin/sgdisk', '/sbin/sgdisk'].find((p) => existsSync(p));
const DEMO = SIM_IMAGES.find((i) => i.ref.endsWith('/bootc-demo:latest'))!.ref; // 1400 MiB
const HUGE = SIM_IMAGES.find((i) => i.ref.endsWith('/huge-bootc:latest'))!.ref; // 60000 MiB
const DISK_BYTES = 20 * 1024 ** 3; // the lab's default disk
const MIB = 1024 * 1024;

type Tool = 'sfdisk' | 'sgdisk';

/**
 * PATH-first sfdisk and sgdisk that log `<tool> <argv>` to $TOOL_LOG, then run the next one of
 * that name on the PATH (stdin, sfdisk's script, passes through).
 */
function toolCounter(dir: string): {
  dir: string;
  log: string;
  count: (t: Tool) => number;
  runs: () => string[];
} {
  const bin = join(dir, 'count-bin');
  mkdirSync(bin, { recursive: true });
  for (const tool of ['sfdisk', 'sgdisk'] as const) {
    // Drops its own directory (first on the PATH) and runs whichever one the ramdisk has.
    const script = `#!/bin/sh
printf '%s %s\\n' ${tool} "$*" >> "$TOOL_LOG"
PATH=\${PATH#*:}
exec ${tool} "$@"
`;
    writeFileSync(join(bin, tool), script, { mode: 0o755 });
  }
  const log = join(dir, 'tools.log');
  writeFileSync(log, '');
  const runs = () => readFileSync(log, 'utf8').split('\n').filter(Boolean);
  return { dir: bin, log, runs, count: (t) => runs().filter((l) => l.startsWith(`${t} `)).length };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a ramdisk tool on node n as the lab does: its sandbox, env file and tool PATH. */
function onNode(
  n: SimNode,
  argv: string[],
  o: { first?: string[]; tools?: string; env?: Record<string, string> } = {},
): Run {
  const toolDirs = o.tools
    ? n.cfg.toolDirs.map((d) => (d === RAMDISK_TOOLS_DIR ? o.tools! : d))
    : n.cfg.toolDirs;
  const env = {
    PATH: [
      ...(o.first ?? []),
      ...toolDirs,
      '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    ].join(':'),
    LANG: 'C',
    TSBM_SIM_ROOT: n.root,
    TSBM_SIM_ENV: join(n.root, 'sim/node.env'),
    TSBM_SIM_NODE_BIN: process.execPath,
    ...(process.env.TSBM_SIM_STANDINS ? { TSBM_SIM_STANDINS: process.env.TSBM_SIM_STANDINS } : {}),
    ...o.env,
  };
  const cmd = argv[0]!.includes('/') ? argv[0]! : join(o.tools ?? RAMDISK_TOOLS_DIR, argv[0]!);
  const r = spawnSync(cmd, argv.slice(1), { cwd: n.root, env, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `podman pull` with the lab's registry credentials, so `podman run` finds the image. */
function pull(lab: Lab, n: SimNode, ref: string): void {
  const secret = readFileSync(lab.inventory, 'utf8').match(/image_pull_secret: (\S+)/)![1]!;
  const auth = join(n.root, 'tmp/auth.json');
  writeFileSync(auth, JSON.stringify({ auths: { [ref.split('/')[0]!]: { auth: secret } } }));
  const r = onNode(n, ['podman', 'pull', '--authfile', auth, ref]);
  expect(r.code, r.stderr).toBe(0);
}

function install(
  n: SimNode,
  rootSize: string,
  o: Parameters<typeof onNode>[2] & { image?: string; device?: string } = {},
): Run {
  const keys = join(n.root, 'tmp/keys');
  writeFileSync(keys, 'ssh-ed25519 AAAAtest controller\n');
  return onNode(
    n,
    [
      'podman',
      'run',
      '--rm',
      '--privileged',
      '--pid=host',
      '-v',
      '/dev:/dev',
      o.image ?? DEMO,
      'bootc',
      'install',
      'to-disk',
      '--wipe',
      '--skip-fetch-check',
      `--root-size=${rootSize}`,
      `--root-ssh-authorized-keys=${keys}`,
      o.device ?? n.diskFile,
    ],
    o,
  );
}

async function readAt(file: string, offset: number, length: number): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const b = Buffer.alloc(length);
    await fh.read(b, 0, length, offset);
    return b;
  } finally {
    await fh.close();
  }
}

/** The table sim-bootc wrote: sectors 0..33 and the last 33 of the disk. */
async function gptBytes(disk: string): Promise<Buffer> {
  const size = statSync(disk).size;
  return Buffer.concat([await readAt(disk, 0, 34 * 512), await readAt(disk, size - 33 * 512, 33 * 512)]);
}

const diskGuid = async (disk: string) => (await readAt(disk, 512 + 56, 16)).toString('hex');

/**
 * The header fields the template copy relies on: primary header at 1 with its 128 entries of 128
 * bytes in 2..33, backup header at the last sector with its entries in the 32 before it, first
 * usable sector 2048 (sfdisk's default, as on real bootc disks).
 */
async function expectGeometry(disk: string): Promise<void> {
  const sectors = statSync(disk).size / 512;
  const field = (h: Buffer) => ({
    sig: h.subarray(0, 8).toString('latin1'),
    my: Number(h.readBigUInt64LE(24)),
    alt: Number(h.readBigUInt64LE(32)),
    firstUsable: Number(h.readBigUInt64LE(40)),
    lastUsable: Number(h.readBigUInt64LE(48)),
    entries: Number(h.readBigUInt64LE(72)),
    count: h.readUInt32LE(80),
    size: h.readUInt32LE(84),
  });
  const geometry = { sig: 'EFI PART', firstUsable: 2048, lastUsable: sectors - 34, count: 128, size: 128 };
  expect(field(await readAt(disk, 512, 512))).toEqual({ ...geometry, my: 1, alt: sectors - 1, entries: 2 });
  expect(field(await readAt(disk, (sectors - 1) * 512, 512))).toEqual({
    ...geometry,
    my: sectors - 1,
    alt: 1,
    entries: sectors - 33,
  });
}

/** ESP of 512 MiB at 1 MiB, then root of rootMiB, valid to sgdisk -v and sfdisk, backup at the disk end. */
async function expectLayout(disk: string, rootMiB: number): Promise<void> {
  await expectGeometry(disk);
  const layout = await readDiskLayout(disk);
  expect(layout.partitions.map((p) => [p.name, p.typeGuid, p.startBytes, p.sizeBytes])).toEqual([
    ['EFI-SYSTEM', 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B', MIB, 512 * MIB],
    ['root', '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709', 513 * MIB, rootMiB * MIB],
  ]);
  if (SGDISK) {
    const v = spawnSync(SGDISK, ['-v', disk], { encoding: 'utf8' });
    expect(v.status, v.stdout + v.stderr).toBe(0);
    expect(v.stdout).toMatch(/No problems found/);
  }
  if (SFDISK) {
    const r = spawnSync(SFDISK, ['--json', disk], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe(''); // no "backup GPT table is corrupt" or the like
    const t = (
      JSON.parse(r.stdout) as {
        partitiontable: {
          label: string;
          firstlba: number;
          lastlba: number;
          partitions: { name: string; start: number; size: number }[];
        };
      }
    ).partitiontable;
    expect(t.label).toBe('gpt');
    expect(t.firstlba).toBe(2048); // sfdisk's default, as on real bootc disks
    expect(t.lastlba).toBe(DISK_BYTES / 512 - 34);
    expect(t.partitions.map((p) => [p.name, p.start * 512, p.size * 512])).toEqual([
      ['EFI-SYSTEM', MIB, 512 * MIB],
      ['root', 513 * MIB, rootMiB * MIB],
    ]);
  }
}

const template = (lab: Lab, rootMiB: number) => join(lab.dir, 'cache', `gpt-${DISK_BYTES}-${rootMiB}M`);
const bootcCount = (n: SimNode) => readFileSync(join(n.root, 'sim/bootc-count'), 'utf8').trim();

/**
 * What an image deploy leaves for bootc to replace: a GPT written for a 2 GiB disk (its backup
 * header mid-disk, where sfdisk complains about it) with a config-2 partition in it.
 */
function oldImageTable(disk: string): void {
  const size = statSync(disk).size;
  truncateSync(disk, 2 * 1024 ** 3);
  const r = spawnSync(SFDISK!, ['-q', disk], {
    input:
      'label: gpt\nsize=100MiB, name="esp"\nsize=1800MiB, name="img-root"\nsize=64MiB, name="config-2"\n',
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  truncateSync(disk, size);
}

describe.skipIf(!SFDISK)('sim-bootc: the GPT from a per-lab template', () => {
  let dir: string;
  let lab: Lab;
  let counter: ReturnType<typeof toolCounter>;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-gpt-template-'));
    lab = await startLab({
      nodes: 5,
      dir: join(dir, 'lab'),
      bootDelayMs: 200,
      powerDelayMs: 50,
      faults: 'node04:bootc_fail',
    });
    counter = toolCounter(dir);
    for (const n of lab.nodes) pull(lab, n, DEMO);
  }, 60_000);
  afterAll(async () => {
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const count = (n: SimNode, rootSize: string, o: Parameters<typeof install>[2] = {}) =>
    install(n, rootSize, { first: [counter.dir], env: { TOOL_LOG: counter.log }, ...o });

  it('the lab gives its nodes an empty cache directory', () => {
    expect(readdirSync(join(lab.dir, 'cache'))).toEqual([]);
    expect(readFileSync(join(lab.nodes[0]!.root, 'sim/node.env'), 'utf8')).toContain(
      `TSBM_SIM_CACHE=${join(lab.dir, 'cache')}\n`,
    );
  });

  it('the first install runs sfdisk once and saves the table; the next node copies it, running neither sfdisk nor sgdisk', async () => {
    const [n1, n2] = lab.nodes;
    const r1 = count(n1!, '4096M');
    expect(r1.code, r1.stderr).toBe(0);
    expect(r1.stdout).toBe('Installation complete!\n');
    expect(r1.stderr).toBe('Installing image: docker://sim\n');
    // One sfdisk on the node's disk, never asking, re-reading or telling a kernel; no sgdisk.
    expect(counter.runs()).toEqual([
      `sfdisk --no-reread --no-tell-kernel -q --wipe-partitions never ${n1!.diskFile}`,
    ]);
    expect(statSync(template(lab, 4096)).size).toBe(67 * 512);
    expect(readdirSync(join(lab.dir, 'cache'))).toEqual([`gpt-${DISK_BYTES}-4096M`]); // no temporary left
    expect((await gptBytes(n1!.diskFile)).equals(readFileSync(template(lab, 4096)))).toBe(true);

    const r2 = count(n2!, '4096M');
    expect(r2.code, r2.stderr).toBe(0);
    expect(r2.stdout).toBe('Installation complete!\n');
    expect(r2.stderr).toBe('Installing image: docker://sim\n');
    expect([counter.count('sfdisk'), counter.count('sgdisk')]).toEqual([1, 0]); // the template, no tool
    expect(await diskGuid(n2!.diskFile)).toBe(await diskGuid(n1!.diskFile));
    for (const n of [n1!, n2!]) {
      await expectLayout(n.diskFile, 4096);
      expect(bootcCount(n)).toBe('1');
      expect(readFileSync(join(n.root, 'sim/bootc-args'), 'utf8')).toMatch(
        /^--wipe --skip-fetch-check --root-size=4096M --root-ssh-authorized-keys=\S+ \S+\/dev\/vda\n$/,
      );
      expect(readFileSync(join(n.root, 'sim/root-authorized-keys'), 'utf8')).toBe(
        'ssh-ed25519 AAAAtest controller\n',
      );
    }
  });

  it('another root size gets its own template, replacing an older table; a copy replaces one too', async () => {
    const [n1, , n3] = lab.nodes;
    // node03's disk holds what an image deploy left: sfdisk replaces it, and its complaints
    // about the old table (backup not at the disk end) stay out of bootc's output.
    oldImageTable(n3!.diskFile);
    expect((await readDiskLayout(n3!.diskFile)).partitions.map((p) => p.name)).toEqual([
      'esp',
      'img-root',
      'config-2',
    ]);
    const r3 = count(n3!, '6G');
    expect(r3.code, r3.stderr).toBe(0);
    expect(r3.stderr).toBe('Installing image: docker://sim\n');
    expect([counter.count('sfdisk'), counter.count('sgdisk')]).toEqual([2, 0]);
    expect(readdirSync(join(lab.dir, 'cache')).sort()).toEqual([
      `gpt-${DISK_BYTES}-4096M`,
      `gpt-${DISK_BYTES}-6144M`,
    ]);
    await expectLayout(n3!.diskFile, 6144);
    expect((await gptBytes(n3!.diskFile)).equals(readFileSync(template(lab, 6144)))).toBe(true);

    // node01 already holds the 4096M table: the 6144M template overwrites all of it.
    const r1 = count(n1!, '6144M');
    expect(r1.code, r1.stderr).toBe(0);
    expect([counter.count('sfdisk'), counter.count('sgdisk')]).toEqual([2, 0]);
    await expectLayout(n1!.diskFile, 6144);
    expect(await diskGuid(n1!.diskFile)).toBe(await diskGuid(n3!.diskFile));
    expect(bootcCount(n1!)).toBe('2');
  });

  it('refusals are as before and touch neither the disk, the cache, sfdisk nor sgdisk', async () => {
    const n5 = lab.nodes[4]!;
    const cache = readdirSync(join(lab.dir, 'cache')).sort();
    const wrong = count(n5, '4096M', { device: join(n5.root, 'dev/sda') });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(
      /^error: refusing to install to \S+\/dev\/sda: the simulated node only has \/dev\/vda\n$/,
    );
    pull(lab, n5, HUGE);
    const small = count(n5, '8192M', { image: HUGE });
    expect(small.code).toBe(1);
    expect(small.stderr).toMatch(
      /^error: Installing to disk: disk \S+ \(20480 MiB\) is too small for a root of 8192 MiB holding an image of 60000 MiB\n$/,
    );
    const big = count(n5, '20000M');
    expect(big.code).toBe(1);
    expect(big.stderr).toMatch(/too small for a root of 20000 MiB/);
    const odd = count(n5, '4O96M');
    expect([odd.code, odd.stderr]).toEqual([1, 'error: Installing to disk: invalid --root-size: 4O96M\n']);
    const failing = count(lab.nodes[3]!, '4096M');
    expect(failing.code).toBe(1);
    expect(failing.stderr).toMatch(/simulated failure/);
    expect([counter.count('sfdisk'), counter.count('sgdisk')]).toEqual([2, 0]);
    expect(readdirSync(join(lab.dir, 'cache')).sort()).toEqual(cache);
    for (const n of [n5, lab.nodes[3]!]) {
      expect((await readDiskLayout(n.diskFile)).table).toBe('none');
      expect(existsSync(join(n.root, 'sim/bootc-count'))).toBe(false);
    }
  });

  it('podman sources sim-bootc (no exec: works without its x bit); run directly it still works', async () => {
    const n5 = lab.nodes[4]!;
    const tools = join(dir, 'tools');
    cpSync(RAMDISK_TOOLS_DIR, tools, { recursive: true });
    chmodSync(join(tools, 'sim-bootc'), 0o644);
    const sourced = count(n5, '4096M', { tools });
    expect(sourced.code, sourced.stderr).toBe(0);
    expect(sourced.stdout).toBe('Installation complete!\n');
    await expectLayout(n5.diskFile, 4096);
    expect(bootcCount(n5)).toBe('1');
    // Sourced, a failure still ends podman with sim-bootc's status and message, nothing after it.
    const refused = count(n5, '4096M', { tools, device: '/dev/sdb' });
    expect([refused.code, refused.stdout, refused.stderr]).toEqual([
      1,
      '',
      'error: refusing to install to /dev/sdb: the simulated node only has /dev/vda\n',
    ]);
    const notInstall = onNode(n5, ['podman', 'run', DEMO, 'bootc', 'status'], { tools });
    expect([notInstall.code, notInstall.stderr]).toEqual([
      2,
      "error: simulated bootc only implements 'install to-disk'\n",
    ]);

    const direct = onNode(n5, ['sim-bootc', 'install', 'to-disk', '--root-size=6144M', n5.diskFile], {
      first: [counter.dir],
      env: { TOOL_LOG: counter.log, SIM_IMAGE_SIZE_MIB: '1400' },
    });
    expect(direct.code, direct.stderr).toBe(0);
    expect(direct.stdout).toBe('Installation complete!\n');
    await expectLayout(n5.diskFile, 6144);
    expect(bootcCount(n5)).toBe('2');
    expect([counter.count('sfdisk'), counter.count('sgdisk')]).toEqual([2, 0]);
  });

  it('a failing sfdisk fails the install with its message, and saves no template', () => {
    const n5 = lab.nodes[4]!;
    const cache = readdirSync(join(lab.dir, 'cache')).sort();
    const bin = join(dir, 'failing-bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      join(bin, 'sfdisk'),
      `#!/bin/sh
echo 'Checking that no-one is using this disk right now ... OK'
for d; do :; done
echo "sfdisk: cannot open $d: Device or resource busy" >&2
exit 1
`,
      { mode: 0o755 },
    );
    // A root size no template exists for: sim-bootc runs sfdisk.
    const r = install(n5, '5000M', { first: [bin] });
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toBe(
      `Installing image: docker://sim\nsfdisk: cannot open ${n5.diskFile}: Device or resource busy\n`,
    );
    expect(readdirSync(join(lab.dir, 'cache')).sort()).toEqual(cache);
    expect(bootcCount(n5)).toBe('2');
  });
});

// sim-bootc runs no sgdisk, so a lab on a machine without gdisk nor util-linux's sfdisk (here
// forced onto the TypeScript stand-ins, as on a minimal Debian) installs just the same: the
// first node's table comes from the sfdisk stand-in, the second node copies it, and the sgdisk
// stand-in (which image_write's `sgdisk -e` still needs) never runs.
describe('sim-bootc in a lab forced onto the TypeScript sgdisk and sfdisk stand-ins', () => {
  let dir: string;
  let lab: Lab;
  let restore: () => void = () => undefined;
  beforeAll(async () => {
    restore = forceStandins('sgdisk,sfdisk');
    dir = mkdtempSync(join(tmpdir(), 'tsbm-gpt-template-js-'));
    // A template left from an earlier lab in this directory is not to be trusted: start empties it.
    mkdirSync(join(dir, 'lab', 'cache'), { recursive: true });
    writeFileSync(join(dir, 'lab', 'cache', `gpt-${DISK_BYTES}-4096M`), Buffer.alloc(67 * 512, 0xaa));
    lab = await startLab({ nodes: 2, dir: join(dir, 'lab'), bootDelayMs: 200, powerDelayMs: 50 });
    for (const n of lab.nodes) pull(lab, n, DEMO);
  }, 60_000);
  afterAll(async () => {
    await lab?.close();
    restore();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the stand-ins are on the PATH; the first node installs with the sfdisk stand-in, the second from its template', async () => {
    const [n1, n2] = lab.nodes;
    expect(n1!.cfg.toolDirs).toContain(STANDIN_DIR);
    expect(readdirSync(join(lab.dir, 'cache'))).toEqual([]);
    const r1 = install(n1!, '4096M');
    expect(r1.code, r1.stderr).toBe(0);
    expect((await gptBytes(n1!.diskFile)).equals(readFileSync(template(lab, 4096)))).toBe(true);
    const r2 = install(n2!, '4096M');
    expect(r2.code, r2.stderr).toBe(0);
    expect(await diskGuid(n2!.diskFile)).toBe(await diskGuid(n1!.diskFile));
    expect(readFileSync(join(n1!.root, 'sim/sfdisk-standin-args'), 'utf8')).toBe(
      `--no-reread --no-tell-kernel -q --wipe-partitions never ${n1!.diskFile}\n`,
    );
    expect(existsSync(join(n2!.root, 'sim/sfdisk-standin-args'))).toBe(false); // the template's copy
    for (const n of lab.nodes) {
      expect(existsSync(join(n.root, 'sim/sgdisk-standin-args'))).toBe(false); // no sgdisk run
      await expectLayout(n.diskFile, 4096);
      expect(bootcCount(n)).toBe('1');
    }
  });

  it("the sfdisk stand-in replaces an image deploy's table (backup header mid-disk) as sfdisk does", async () => {
    const n2 = lab.nodes[1]!;
    // What an image deploy leaves: a GPT written for a 2 GiB disk, made here by the stand-in too.
    const size = statSync(n2.diskFile).size;
    truncateSync(n2.diskFile, 2 * 1024 ** 3);
    const made = runSfdisk(['-q', n2.diskFile], () => 'label: gpt\nsize=100MiB, name="esp"\nsize=1800MiB, name="img-root"\nsize=64MiB, name="config-2"\n');
    expect(made.code, made.stderr).toBe(0);
    truncateSync(n2.diskFile, size);
    expect((await readDiskLayout(n2.diskFile)).partitions.map((p) => p.name)).toEqual(['esp', 'img-root', 'config-2']);
    const r = install(n2, '6G'); // a root size with no template yet: the stand-in runs
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('Installing image: docker://sim\n');
    expect(readFileSync(join(n2.root, 'sim/sfdisk-standin-args'), 'utf8')).toBe(
      `--no-reread --no-tell-kernel -q --wipe-partitions never ${n2.diskFile}\n`,
    );
    await expectLayout(n2.diskFile, 6144);
    // Nothing of the old table is left where a tool would find it: the old backup header is gone.
    expect((await readAt(n2.diskFile, 2 * 1024 ** 3 - 512, 8)).toString('latin1')).not.toBe('EFI PART');
  });
});
