// Data the lab ships beside the code (mockup trees, ramdisk tools), found from the lab package's
// root both when running compiled (dist/lab) and from source (src/lab) in tests.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findProgram } from 'tsbm/lib/util/find-program.js';

export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MOCKUPS_DIR = join(PACKAGE_ROOT, 'mockups');
export const RAMDISK_TOOLS_DIR = join(PACKAGE_ROOT, 'ramdisk', 'bin');
/**
 * Stand-ins for tools a machine may lack (gdisk's sgdisk, util-linux's sfdisk and partx, curl;
 * Debian's minimal install has only partx): on the ramdisk's PATH only when one is needed,
 * since each hands over to the real tool when it exists (an extra exec per call).
 */
export const STANDIN_DIR = join(PACKAGE_ROOT, 'ramdisk', 'standin');
const STANDIN_TOOLS = ['sgdisk', 'sfdisk', 'partx', 'curl'] as const;

let missingTools: string[] | undefined;

/** The stand-in tools the machine lacks, or that TSBM_SIM_STANDINS (a list, or `all`) asks for. */
function standinsNeeded(): string[] {
  // The ramdisk's PATH, not the lab's: sbin may be missing from an unprivileged user's.
  missingTools ??= STANDIN_TOOLS.filter((t) => findProgram(t, ['/usr/sbin', '/sbin', '/usr/bin', '/bin']) === undefined);
  const forced = (process.env.TSBM_SIM_STANDINS ?? '').split(',').map((s) => s.trim());
  return STANDIN_TOOLS.filter((t) => forced.includes('all') || forced.includes(t) || missingTools!.includes(t));
}

/** The directories put first on a simulated ramdisk's PATH. */
export function ramdiskToolDirs(): string[] {
  return standinsNeeded().length > 0 ? [RAMDISK_TOOLS_DIR, STANDIN_DIR] : [RAMDISK_TOOLS_DIR];
}
export const DEFAULT_MOCKUPS = ['hpe-ilo5-dl325-gen10plus', 'dmtf-public-rackmount1'];

/** A shipped tree's name or a directory in the DMTF short-form layout. */
export function resolveMockup(nameOrDir: string): string | undefined {
  const shipped = join(MOCKUPS_DIR, nameOrDir);
  if (!nameOrDir.includes('/') && existsSync(join(shipped, 'index.json'))) return shipped;
  const dir = resolve(nameOrDir);
  return existsSync(join(dir, 'index.json')) ? dir : undefined;
}
