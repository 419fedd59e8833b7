// `tsbm ramdisk build`: the deploy ramdisk as a UEFI-bootable ISO, made on the controller from
// Debian's packages. debootstrap installs the profile's packages into a scratch root, tsbm adds
// its boot files and prunes what no deploy reads, the root becomes one compressed initramfs,
// and tsbm's ISO writer puts the kernel and initrd beside a GRUB EFI loader. A manifest beside
// the ISO records every package's version; a build whose recipe and archive state match the
// manifest there reuses the ISO (a cache hit) instead of building again.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { buildFat } from '../configdrive/fat.js';
import { buildIso } from '../configdrive/iso9660.js';
import { optionsError } from '../errors.js';
import { grubBootCfg, grubWord } from '../util/grub-cfg.js';
import { bootFiles, RAMDISK_ISO_LABEL } from './boot-files.js';
import { cacheKeyOf, installedPackages, type RamdiskManifest, readManifest, sha256 } from './manifest.js';
import { COMPONENTS, PRUNE, profilePackages, type RamdiskProfile } from './profiles.js';

export const BUILD_STEPS = ['archive', 'bootstrap', 'configure', 'initrd', 'loader', 'iso'] as const;
export type BuildStep = (typeof BUILD_STEPS)[number];

export interface BuildProgress {
  step: BuildStep;
  /** 1-based position of the step among BUILD_STEPS. */
  index: number;
  total: number;
  message: string;
}

/** The programs and network a build uses, injected so a test can stand in for the slow ones. */
export interface BuildTools {
  /** Runs a program to its end; each line of its output goes to onLine. Rejects on a non-zero exit. */
  run(argv: string[], opts?: { onLine?: (line: string) => void; signal?: AbortSignal }): Promise<void>;
  /** GETs a URL (the archive's InRelease). */
  fetch(url: string, signal?: AbortSignal): Promise<Buffer>;
  /** The EFI loader (GRUB) that boots the ISO labelled `label`. */
  efiLoader(label: string, signal?: AbortSignal): Promise<Buffer>;
}

export interface BuildOptions {
  profile: RamdiskProfile;
  outDir: string;
  suite: string;
  mirror: string;
  /** More kernel arguments. */
  append: string;
  /** Build even when the manifest says the ISO there is current. */
  force: boolean;
  tools: BuildTools;
  onProgress: (p: BuildProgress) => void;
  signal?: AbortSignal;
}

export interface BuildResult {
  iso: string;
  manifestFile: string;
  manifest: RamdiskManifest;
  cached: boolean;
}

export class RamdiskBuildError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

const KERNEL_PATH = 'live/vmlinuz';
const INITRD_PATH = 'live/initrd.img';
const GRUB_CFG_PATH = 'EFI/BOOT/grub.cfg';
/** Fixed, so the same inputs give the same ISO bytes. */
const ISO_DATE = new Date('2000-01-01T00:00:00Z');
/** The serial console last: /dev/console, what a BMC's serial-over-LAN and a VM's log show. */
const CONSOLE_ARGS = 'console=tty0 console=ttyS0,115200n8';

export const isoName = (profile: RamdiskProfile) => `tsbm-ramdisk-${profile}.iso`;
export const manifestName = (profile: RamdiskProfile) => `tsbm-ramdisk-${profile}.manifest.json`;

/** The kernel's arguments: the consoles, then --append's, each one GRUB word (else exit 5). */
export function kernelArgs(append: string): string[] {
  return [...CONSOLE_ARGS.split(' '), ...append.split(/\s+/).filter(Boolean)].map((a) => {
    const w = grubWord(a);
    if (w === undefined) throw optionsError(`--append: ${JSON.stringify(a)} cannot be one kernel argument`, 'give arguments without quotes, backslashes or control characters');
    return w;
  });
}

export function grubCfg(words: readonly string[]): string {
  return grubBootCfg({
    comment: 'Written by tsbm ramdisk build.',
    label: RAMDISK_ISO_LABEL,
    title: 'tsbm deploy ramdisk',
    kernel: KERNEL_PATH,
    initrd: INITRD_PATH,
    words,
  });
}

/** The recipe's hash: everything of tsbm's that decides what the ISO holds. */
export function recipeHash(o: Pick<BuildOptions, 'profile' | 'suite' | 'mirror' | 'append'>): string {
  return sha256(
    JSON.stringify({
      profile: o.profile,
      suite: o.suite,
      mirror: o.mirror,
      components: COMPONENTS,
      packages: Object.keys(profilePackages(o.profile)).sort(),
      prune: PRUNE,
      files: bootFiles(),
      grub: grubCfg(kernelArgs(o.append)),
    }),
  );
}

function fileSha256(file: string): string {
  return sha256(readFileSync(file));
}

/** The ISO already in outDir when its manifest has this key and the file is what it recorded. */
function cachedBuild(o: BuildOptions, key: string): BuildResult | undefined {
  const manifestFile = join(o.outDir, manifestName(o.profile));
  const iso = join(o.outDir, isoName(o.profile));
  const m = readManifest(manifestFile);
  if (!m || cacheKeyOf(m) !== key || !existsSync(iso)) return undefined;
  if (statSync(iso).size !== m.iso.size || fileSha256(iso) !== m.iso.sha256) return undefined;
  return { iso, manifestFile, manifest: m, cached: true };
}

function removeGlob(root: string, rel: string): void {
  const dir = join(root, dirname(rel));
  const base = rel.split('/').at(-1) ?? '';
  if (!base.includes('*')) {
    rmSync(join(root, rel), { recursive: true, force: true });
    return;
  }
  const re = new RegExp(`^${base.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
  if (!existsSync(dir)) return;
  for (const f of readdirSync(dir)) if (re.test(f)) rmSync(join(dir, f), { recursive: true, force: true });
}

/** The kernel version of the root: the one directory under usr/lib/modules. */
function kernelVersion(root: string): string {
  const dir = join(root, 'usr/lib/modules');
  const versions = existsSync(dir) ? readdirSync(dir) : [];
  if (versions.length !== 1) {
    throw new RamdiskBuildError(`the ramdisk root has ${versions.length ? `${versions.length} kernels (${versions.join(', ')})` : 'no kernel'} under /usr/lib/modules; one is needed`, 'build again with --force; report it if it stays');
  }
  return versions[0]!;
}

/** tsbm's files in, no host key or machine id baked in, root locked to keys, pruned. */
function configureRoot(root: string, kver: string): void {
  for (const f of bootFiles()) {
    const path = join(root, f.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, f.text, { mode: f.mode });
    chmodSync(path, f.mode);
  }
  // Made fresh every boot: a key baked in would be every node's.
  for (const f of readdirSync(join(root, 'etc/ssh'))) if (f.startsWith('ssh_host_')) rmSync(join(root, 'etc/ssh', f));
  writeFileSync(join(root, 'etc/machine-id'), '');
  // `*`: no password ever, yet not "locked" (OpenSSH without PAM refuses locked accounts, even by key).
  const shadow = join(root, 'etc/shadow');
  writeFileSync(shadow, readFileSync(shadow, 'utf8').replace(/^root:[^:]*:/m, 'root:*:'));
  for (const p of PRUNE) removeGlob(root, p.replace('KVER', kver));
}

export async function buildRamdisk(o: BuildOptions): Promise<BuildResult> {
  // A bad --append is refused before the archive is asked anything.
  kernelArgs(o.append);
  const total = BUILD_STEPS.length;
  const progress = (step: BuildStep, message: string) => o.onProgress({ step, index: BUILD_STEPS.indexOf(step) + 1, total, message });
  const releaseUrl = `${o.mirror.replace(/\/+$/, '')}/dists/${o.suite}/InRelease`;
  progress('archive', `reading ${releaseUrl}`);
  let release: Buffer;
  try {
    release = await o.tools.fetch(releaseUrl, o.signal);
  } catch (e) {
    throw new RamdiskBuildError(`cannot read the Debian archive's ${releaseUrl}: ${(e as Error).message}`, 'check --mirror and that the controller reaches it');
  }
  const recipe = recipeHash(o);
  const archive = sha256(release);
  const key = cacheKeyOf({ recipe_sha256: recipe, archive_release_sha256: archive });
  mkdirSync(o.outDir, { recursive: true });
  if (!o.force) {
    const hit = cachedBuild(o, key);
    if (hit) return hit;
  }

  const work = await mkdtemp(join(o.outDir, '.tsbm-ramdisk-work-'));
  try {
    const root = join(work, 'root');
    const packages = Object.keys(profilePackages(o.profile)).sort();
    progress('bootstrap', `debootstrap ${o.suite} from ${o.mirror}: ${packages.length} packages and their dependencies`);
    await o.tools.run(
      ['debootstrap', '--variant=minbase', `--components=${COMPONENTS.join(',')}`, `--include=${packages.join(',')}`, o.suite, root, o.mirror],
      { onLine: (line) => /^I: (Retrieving|Unpacking|Configuring|Installing) /.test(line) && progress('bootstrap', line.slice(3)), ...(o.signal ? { signal: o.signal } : {}) },
    );
    const kver = kernelVersion(root);
    const kernelFile = join(root, 'boot', `vmlinuz-${kver}`);
    if (!existsSync(kernelFile)) throw new RamdiskBuildError(`no kernel at /boot/vmlinuz-${kver} in the ramdisk root`, 'build again with --force');
    const kernel = readFileSync(kernelFile);

    progress('configure', `kernel ${kver}: tsbm's boot files, pruning, depmod`);
    configureRoot(root, kver);
    await o.tools.run(['chroot', root, 'depmod', '-a', kver], o.signal ? { signal: o.signal } : {});
    const installed = installedPackages(readFileSync(join(root, 'var/lib/dpkg/status'), 'utf8'));
    rmSync(join(root, 'var/cache/apt'), { recursive: true, force: true });

    progress('initrd', 'packing the root (cpio, zstd)');
    const initrdFile = join(work, 'initrd.img');
    // The root's paths sorted and mtimes kept: the same root packs to the same bytes.
    await o.tools.run(
      ['sh', '-c', 'cd "$1" && find . -print0 | LC_ALL=C sort -z | cpio --null --create --format=newc --reproducible --quiet | zstd -q -T0 -9 -o "$2"', 'sh', root, initrdFile],
      o.signal ? { signal: o.signal } : {},
    );
    rmSync(root, { recursive: true, force: true });

    progress('loader', 'GRUB EFI loader (grub-mkstandalone)');
    const loader = await o.tools.efiLoader(RAMDISK_ISO_LABEL, o.signal);

    progress('iso', `writing ${isoName(o.profile)}`);
    const args = kernelArgs(o.append);
    const cfg = Buffer.from(grubCfg(args), 'utf8');
    const esp = buildFat(
      [
        { path: GRUB_CFG_PATH, data: cfg },
        { path: 'EFI/BOOT/BOOTX64.EFI', data: loader },
      ],
      { label: 'TSBM-ESP' },
    );
    const iso = buildIso(
      [
        { path: GRUB_CFG_PATH, data: cfg },
        { path: KERNEL_PATH, data: kernel },
        { path: INITRD_PATH, data: readFileSync(initrdFile) },
      ],
      { volumeId: RAMDISK_ISO_LABEL, date: ISO_DATE, publisher: 'tsbm', efiBootImage: esp },
    );
    const isoFile = join(o.outDir, isoName(o.profile));
    const manifestFile = join(o.outDir, manifestName(o.profile));
    const manifest: RamdiskManifest = {
      format: 1,
      profile: o.profile,
      suite: o.suite,
      mirror: o.mirror,
      components: COMPONENTS,
      archive_release_sha256: archive,
      recipe_sha256: recipe,
      kernel: kver,
      kernel_args: [CONSOLE_ARGS, o.append.trim()].filter(Boolean).join(' '),
      packages: installed,
      iso: { file: isoName(o.profile), size: iso.length, sha256: sha256(iso) },
    };
    // The ISO first, then its manifest: a manifest always describes the ISO beside it.
    writeFileSync(`${isoFile}.tmp`, iso);
    renameSync(`${isoFile}.tmp`, isoFile);
    writeFileSync(`${manifestFile}.tmp`, `${JSON.stringify(manifest, null, 2)}\n`);
    renameSync(`${manifestFile}.tmp`, manifestFile);
    return { iso: isoFile, manifestFile, manifest, cached: false };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
