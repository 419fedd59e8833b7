// Data the lab ships beside the code (mockup trees, ramdisk tools), found from the package root
// both when running compiled (dist/sim/lab) and from source (src/sim/lab) in tests.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findProgram } from '../../util/find-program.js';

export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const MOCKUPS_DIR = join(PACKAGE_ROOT, 'src', 'sim', 'mockups');
export const RAMDISK_TOOLS_DIR = join(PACKAGE_ROOT, 'src', 'sim', 'ramdisk', 'bin');
/** The sgdisk stand-in's wrapper: on the ramdisk's PATH only when it is needed (an extra exec per call otherwise). */
export const SGDISK_STANDIN_DIR = join(PACKAGE_ROOT, 'src', 'sim', 'ramdisk', 'sgdisk-standin');

let systemSgdisk: boolean | undefined;

/** The directories put first on a simulated ramdisk's PATH. */
export function ramdiskToolDirs(): string[] {
  // The ramdisk's PATH, not the lab's: sbin may be missing from an unprivileged user's.
  systemSgdisk ??= findProgram('sgdisk', ['/usr/sbin', '/sbin', '/usr/bin', '/bin']) !== undefined;
  const standin = process.env.TSBM_SIM_FORCE_JS_SGDISK === '1' || !systemSgdisk;
  return standin ? [RAMDISK_TOOLS_DIR, SGDISK_STANDIN_DIR] : [RAMDISK_TOOLS_DIR];
}
export const DEFAULT_MOCKUPS = ['hpe-ilo5-dl325-gen10plus', 'dmtf-public-rackmount1'];

/** A shipped tree's name or a directory in the DMTF short-form layout. */
export function resolveMockup(nameOrDir: string): string | undefined {
  const shipped = join(MOCKUPS_DIR, nameOrDir);
  if (!nameOrDir.includes('/') && existsSync(join(shipped, 'index.json'))) return shipped;
  const dir = resolve(nameOrDir);
  return existsSync(join(dir, 'index.json')) ? dir : undefined;
}
