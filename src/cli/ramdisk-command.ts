// The work of `tsbm ramdisk build`: checks the controller, builds (or finds the cached build),
// prints progress while it works and the result at the end.
import { resolve } from 'node:path';
import { optionsError, TsbmError } from '../errors.js';
import { InstallerBootError } from '../modules/anaconda/installer-boot.js';
import { type BuildProgress, type BuildTools, buildRamdisk, RamdiskBuildError } from '../ramdisk/build.js';
import { missingBuildTools, realBuildTools } from '../ramdisk/tools.js';

const MIB = 1024 * 1024;

export interface RamdiskBuildFlags {
  profile: 'image' | 'bootc';
  out: string;
  suite: string;
  mirror: string;
  append: string;
  force?: boolean;
  json?: boolean;
}

export interface RamdiskBuildIo {
  tools: BuildTools;
  isRoot: boolean;
  missing: string[];
  out: (text: string) => void;
  err: (text: string) => void;
  signal?: AbortSignal;
}

const defaultIo = (): RamdiskBuildIo => ({
  tools: realBuildTools,
  isRoot: process.getuid?.() === 0,
  missing: missingBuildTools(),
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
});

export async function ramdiskBuild(flags: RamdiskBuildFlags, io: RamdiskBuildIo = defaultIo()): Promise<void> {
  if (!io.isRoot) throw optionsError('tsbm ramdisk build needs root: debootstrap installs packages into a root with their owners and runs their scripts', 'run it as root (sudo tsbm ramdisk build ...)');
  if (io.missing.length) throw optionsError(`tsbm ramdisk build needs ${io.missing.join(', ')} on this machine`, 'install them (Debian/Ubuntu: apt-get install debootstrap cpio zstd grub-efi-amd64-bin)');
  const outDir = resolve(flags.out);
  let last = '';
  const onProgress = (p: BuildProgress) => {
    if (flags.json) return io.out(`${JSON.stringify({ type: 'ramdisk_build_progress', ...p })}\n`);
    // One line per step, then the package lines under it: enough to see it moves.
    const line = `ramdisk: [${p.index}/${p.total}] ${p.step}: ${p.message}\n`;
    if (line !== last) io.err(line);
    last = line;
  };
  let result: Awaited<ReturnType<typeof buildRamdisk>>;
  try {
    result = await buildRamdisk({
      profile: flags.profile,
      outDir,
      suite: flags.suite,
      mirror: flags.mirror,
      append: flags.append,
      force: flags.force === true,
      tools: io.tools,
      onProgress,
      ...(io.signal ? { signal: io.signal } : {}),
    });
  } catch (e) {
    if (e instanceof RamdiskBuildError || e instanceof InstallerBootError) throw new TsbmError('runtime', `ramdisk build: ${e.message}`, { hint: e.hint });
    if (e instanceof TsbmError) throw e;
    throw new TsbmError('runtime', `ramdisk build failed: ${(e as Error).message}`, { hint: 'see the step above; build again with --force once it is fixed' });
  }
  const m = result.manifest;
  if (flags.json) {
    io.out(`${JSON.stringify({ type: 'ramdisk_build_result', cached: result.cached, iso: result.iso, manifest: result.manifestFile, sha256: m.iso.sha256, size: m.iso.size, packages: Object.keys(m.packages).length, kernel: m.kernel })}\n`);
    return;
  }
  const what = `${result.iso} (${(m.iso.size / MIB).toFixed(0)} MiB, ${Object.keys(m.packages).length} packages, kernel ${m.kernel}, sha256 ${m.iso.sha256})`;
  io.out(result.cached ? `cache hit: ${what} matches its manifest ${result.manifestFile} and the archive; nothing built (--force builds again)\n` : `built ${what}; manifest ${result.manifestFile}\n`);
}
