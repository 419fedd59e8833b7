// The programs of this machine a simulated node's commands run. The lab stands in for what a
// machine may lack (podman, bootc, lsblk, ip, sgdisk, sfdisk, partx, qemu-img, curl: see
// packages/lab/ramdisk) and needs no compiler (its spawner falls back to node); what is
// left is a POSIX shell and coreutils, which every Linux has. Checked before a lab starts, so a
// machine without them hears it in one line instead of every node failing at its first command.
import { TsbmError } from 'tsbm/lib/errors.js';
import { findProgram } from 'tsbm/lib/util/find-program.js';

/** The ramdisk's PATH (packages/lab/src/lab/node.ts), without the lab's own tool directories. */
const RAMDISK_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/**
 * coreutils run by the product's ramdisk commands and the simulated tools, in a bootc or image
 * deploy, and by the default kickstart's scripts in the simulated installer (base64, tail).
 */
export const COREUTILS = [
  'base64',
  'cat',
  'chmod',
  'cut',
  'dd',
  'dirname',
  'env',
  'id',
  'mkdir',
  'mkfifo',
  'mv',
  'rm',
  'rmdir',
  'sha256sum',
  'stat',
  'sync',
  'tail',
  'tee',
  'uname',
  'wc',
];

let checked = false;

/** `dirs`: where the ramdisk looks; `binDir`: where `/bin/sh` is (both for tests). */
export function missingHostPrograms(dirs: readonly string[] = RAMDISK_PATH, binDir = '/bin'): string[] {
  const missing = COREUTILS.filter((p) => findProgram(p, dirs) === undefined);
  // Commands start as `/bin/sh -c ...` (spawner.c, spawner.pl, exec.ts): that exact path.
  return findProgram('sh', [binDir]) ? missing : ['/bin/sh', ...missing];
}

/** A one-line error naming every missing program and how to install it, or undefined. */
export function hostProgramsError(missing: string[]): TsbmError | undefined {
  if (missing.length === 0) return undefined;
  return new TsbmError(
    'runtime',
    `the simulated lab runs its nodes' commands with this machine's programs, and ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} missing`,
    {
      hint: missing.includes('/bin/sh')
        ? 'install a POSIX shell as /bin/sh and GNU coreutils; on Debian and Ubuntu: apt-get install dash coreutils'
        : 'install GNU coreutils; on Debian and Ubuntu: apt-get install coreutils',
    },
  );
}

/** Throws hostProgramsError for this machine (checked once per process). */
export function checkHostPrograms(): void {
  if (checked) return;
  const e = hostProgramsError(missingHostPrograms());
  if (e) throw e;
  checked = true;
}
