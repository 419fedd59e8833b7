// tsbm ramdisk build with its slow parts stood in: debootstrap makes a small root (a dpkg status,
// a kernel, modules, host keys) instead of installing packages, chroot's depmod is recorded, and
// the EFI loader is a placeholder. Real: the boot files, pruning, the cpio+zstd initrd, the ISO
// writer, the manifest and the cache. The real build runs in test/e2e/ramdisk-boot.e2e.test.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type RamdiskBuildFlags, ramdiskBuild } from '../../src/cli/ramdisk-command.js';
import { readIsoFiles, isoVolumeId } from '../../src/configdrive/iso9660-read.js';
import { TsbmError } from '../../src/errors.js';
import { type BuildProgress, type BuildTools, buildRamdisk } from '../../src/ramdisk/build.js';
import { realBuildTools } from '../../src/ramdisk/tools.js';

const KVER = '6.1.0-99-amd64';
const STATUS = ['Package: busybox\nStatus: install ok installed\nVersion: 1:1.35.0-4', 'Package: podman\nStatus: install ok installed\nVersion: 4.3.1+ds1-8', 'Package: gone\nStatus: deinstall ok config-files\nVersion: 1.0'].join('\n\n');
const scratch = mkdtempSync(join(tmpdir(), 'tsbm-ramdisk-build-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const haveTools = ['cpio', 'zstd'].every((t) => spawnSync('sh', ['-c', `command -v ${t}`]).status === 0);

function fakeRoot(root: string): void {
  const put = (p: string, text: string) => {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), text);
  };
  put('var/lib/dpkg/status', `${STATUS}\n`);
  put(`boot/vmlinuz-${KVER}`, 'KERNEL-BYTES');
  put(`usr/lib/modules/${KVER}/kernel/drivers/net/ethernet/e1000e.ko`, 'ko');
  put(`usr/lib/modules/${KVER}/kernel/drivers/gpu/drm/i915.ko`, 'ko');
  put('usr/lib/firmware/bnx2x/fw.bin', 'fw');
  put('usr/lib/firmware/amdgpu/gpu.bin', 'fw');
  put('usr/lib/firmware/iwlwifi-8000C-36.ucode', 'fw');
  put('usr/share/doc/busybox/copyright', 'doc');
  put('etc/ssh/ssh_host_ed25519_key', 'PRIVATE');
  put('etc/ssh/ssh_host_ed25519_key.pub', 'ssh-ed25519 AAAA');
  put('etc/ssh/sshd_config', 'Include /etc/ssh/sshd_config.d/*.conf\n');
  put('etc/shadow', 'root:!:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n');
  put('etc/machine-id', 'abc\n');
}

function fakeTools(release: () => string, calls: string[][]): BuildTools {
  return {
    async run(argv, opts) {
      calls.push(argv);
      if (argv[0] === 'debootstrap') {
        opts?.onLine?.('I: Retrieving podman 4.3.1+ds1-8');
        fakeRoot(argv.at(-2)!);
        return;
      }
      if (argv[0] === 'chroot') return;
      return realBuildTools.run(argv, opts);
    },
    fetch: async () => Buffer.from(release()),
    efiLoader: async (label) => Buffer.from(`MZ loader for ${label}`),
  };
}

const flags = (out: string, more: Partial<RamdiskBuildFlags> = {}): RamdiskBuildFlags => ({ profile: 'bootc', out, suite: 'bookworm', mirror: 'http://mirror.invalid/debian', append: '', ...more });

describe.skipIf(!haveTools)('tsbm ramdisk build (stand-in debootstrap)', () => {
  const out = join(scratch, 'out');
  let release = 'InRelease 1';
  const calls: string[][] = [];
  const tools = fakeTools(() => release, calls);
  const progress: BuildProgress[] = [];
  const build = (force = false) => buildRamdisk({ profile: 'bootc', outDir: out, suite: 'bookworm', mirror: 'http://mirror.invalid/debian', append: 'ipv6.disable=1', force, tools, onProgress: (p) => progress.push(p) });

  it('builds a UEFI ISO: kernel, an initrd holding tsbm boot files and no host key, pruned; a manifest with every version', async () => {
    const r = await build();
    expect(r.cached).toBe(false);
    expect(calls.find((c) => c[0] === 'debootstrap')).toEqual(expect.arrayContaining(['--variant=minbase', '--components=main,non-free-firmware', 'bookworm', 'http://mirror.invalid/debian']));
    const include = calls.find((c) => c[0] === 'debootstrap')!.find((a) => a.startsWith('--include='))!;
    for (const p of ['linux-image-amd64', 'openssh-server', 'podman', 'util-linux', 'fdisk', 'gdisk', 'curl', 'iproute2', 'firmware-bnx2x']) expect(include.split(/[=,]/)).toContain(p);
    expect(calls).toContainEqual(['chroot', expect.any(String), 'depmod', '-a', KVER]);
    expect([...new Set(progress.map((p) => p.step))]).toEqual(['archive', 'bootstrap', 'configure', 'initrd', 'loader', 'iso']);
    expect(progress.some((p) => p.message === 'Retrieving podman 4.3.1+ds1-8')).toBe(true);

    const iso = readFileSync(r.iso);
    expect(isoVolumeId(iso)).toBe('TSBM-RAMDISK');
    const files = new Map(readIsoFiles(iso).map((f) => [f.path, f.data]));
    expect(files.get('live/vmlinuz')?.toString()).toBe('KERNEL-BYTES');
    expect(files.get('EFI/BOOT/grub.cfg')?.toString()).toMatch(/linux \/live\/vmlinuz console=tty0 console=ttyS0,115200n8 ipv6\.disable=1\n\s+initrd \/live\/initrd\.img/);
    const list = spawnSync('sh', ['-c', 'zstd -dc | cpio -it --quiet'], { input: files.get('live/initrd.img'), encoding: 'utf8' }).stdout.split('\n');
    for (const f of ['init', 'etc/inittab', 'usr/lib/tsbm/boot', 'usr/lib/tsbm/call-home', 'usr/lib/tsbm/udhcpc', 'etc/ssh/sshd_config.d/tsbm.conf', 'usr/lib/firmware/bnx2x/fw.bin', `usr/lib/modules/${KVER}/kernel/drivers/net/ethernet/e1000e.ko`]) expect(list).toContain(f);
    for (const gone of ['etc/ssh/ssh_host_ed25519_key', 'etc/ssh/ssh_host_ed25519_key.pub', `usr/lib/modules/${KVER}/kernel/drivers/gpu`, 'usr/lib/firmware/amdgpu', 'usr/lib/firmware/iwlwifi-8000C-36.ucode', 'usr/share/doc', `boot/vmlinuz-${KVER}`]) expect(list).not.toContain(gone);
    const shadow = spawnSync('sh', ['-c', 'zstd -dc | cpio -i --quiet --to-stdout etc/shadow'], { input: files.get('live/initrd.img'), encoding: 'utf8' }).stdout;
    expect(shadow).toMatch(/^root:\*:/);

    const m = JSON.parse(readFileSync(r.manifestFile, 'utf8'));
    expect(m).toMatchObject({ format: 1, profile: 'bootc', suite: 'bookworm', kernel: KVER, packages: { busybox: '1:1.35.0-4', podman: '4.3.1+ds1-8' } });
    expect(m.packages.gone).toBeUndefined();
    expect(m.iso).toEqual({ file: 'tsbm-ramdisk-bootc.iso', size: iso.length, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(readdirNames(out)).toEqual(['tsbm-ramdisk-bootc.iso', 'tsbm-ramdisk-bootc.manifest.json']);
  });

  it('a second build is a cache hit with the same manifest; a new archive state or --force builds again', async () => {
    const before = readFileSync(join(out, 'tsbm-ramdisk-bootc.manifest.json'), 'utf8');
    calls.length = 0;
    progress.length = 0;
    const again = await build();
    expect(again.cached).toBe(true);
    expect(calls).toEqual([]);
    expect(progress.map((p) => p.step)).toEqual(['archive']);
    expect(readFileSync(join(out, 'tsbm-ramdisk-bootc.manifest.json'), 'utf8')).toBe(before);

    release = 'InRelease 2';
    expect((await build()).cached).toBe(false);
    expect(calls.filter((c) => c[0] === 'debootstrap')).toHaveLength(1);
    expect((await build()).cached).toBe(true);
    expect((await build(true)).cached).toBe(false);
  });

  it('an ISO changed after its manifest was written is not a cache hit', async () => {
    writeFileSync(join(out, 'tsbm-ramdisk-bootc.iso'), 'not the ISO');
    expect((await build()).cached).toBe(false);
  });

  it('the command: progress lines, the result line, and clear refusals without root or tools', async () => {
    const outs: string[] = [];
    const errs: string[] = [];
    const io = { tools, isRoot: true, missing: [], out: (t: string) => void outs.push(t), err: (t: string) => void errs.push(t) };
    await ramdiskBuild(flags(join(scratch, 'cli'), { profile: 'image' }), io);
    expect(errs.join('')).toMatch(/^ramdisk: \[1\/6\] archive: reading http:\/\/mirror\.invalid\/debian\/dists\/bookworm\/InRelease$/m);
    expect(errs.join('')).toMatch(/^ramdisk: \[6\/6\] iso: writing tsbm-ramdisk-image\.iso$/m);
    expect(outs.join('')).toMatch(/^built .*tsbm-ramdisk-image\.iso \(\d+ MiB, 2 packages, kernel 6\.1\.0-99-amd64, sha256 [0-9a-f]{64}\); manifest /);
    const include = calls.filter((c) => c[0] === 'debootstrap').at(-1)!.find((a) => a.startsWith('--include='))!;
    expect(include).not.toContain('podman');
    outs.length = 0;
    await ramdiskBuild(flags(join(scratch, 'cli'), { profile: 'image', json: true }), io);
    expect(JSON.parse(outs.at(-1)!)).toMatchObject({ type: 'ramdisk_build_result', cached: true });

    const notRoot = await ramdiskBuild(flags(join(scratch, 'x')), { ...io, isRoot: false }).catch((e: unknown) => e);
    expect(notRoot).toBeInstanceOf(TsbmError);
    expect((notRoot as TsbmError).exitCode).toBe(5);
    expect((notRoot as TsbmError).oneLine()).toMatch(/needs root/);
    const noTools = await ramdiskBuild(flags(join(scratch, 'x')), { ...io, missing: ['debootstrap (debootstrap)'] }).catch((e: unknown) => e);
    expect((noTools as TsbmError).oneLine()).toMatch(/needs debootstrap \(debootstrap\) on this machine \(install them/);
    expect(existsSync(join(scratch, 'x'))).toBe(false);
    // An --append word GRUB would split or end the line at: exit 5 before the archive is read.
    const before = calls.length;
    const badAppend = await ramdiskBuild(flags(join(scratch, 'x'), { append: "note='x'" }), io).catch((e: unknown) => e);
    expect((badAppend as TsbmError).exitCode).toBe(5);
    expect((badAppend as TsbmError).oneLine()).toMatch(/--append: .* cannot be one kernel argument/);
    expect(calls.length).toBe(before);
    expect(existsSync(join(scratch, 'x'))).toBe(false);
  });

  it('a failing step says which program failed and leaves no work directory', async () => {
    const failing: BuildTools = { ...tools, run: async (argv) => { if (argv[0] === 'debootstrap') throw new Error('debootstrap exited 1: E: Couldn\'t find these debs: nosuch'); } };
    const io = { tools: failing, isRoot: true, missing: [], out: () => {}, err: () => {} };
    const e = (await ramdiskBuild(flags(join(scratch, 'fail'), { force: true }), io).catch((x: unknown) => x)) as TsbmError;
    expect(e.oneLine()).toMatch(/^ramdisk build failed: debootstrap exited 1: E: Couldn't find these debs: nosuch/);
    expect(readdirNames(join(scratch, 'fail'))).toEqual([]);
  });
});

function readdirNames(dir: string): string[] {
  return existsSync(dir) ? spawnSync('ls', ['-A', dir], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).sort() : [];
}
