// The manifest beside a built ramdisk ISO: what went in (profile, archive, every package's
// version, the kernel) and the ISO's digest. Its cache key (the recipe's hash and the archive's
// InRelease digest) decides whether a build can reuse the ISO already there: same recipe, same
// archive state, same packages.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { RamdiskProfile } from './profiles.js';

export interface RamdiskManifest {
  format: 1;
  profile: RamdiskProfile;
  suite: string;
  mirror: string;
  components: string[];
  /** sha256 of the archive's dists/SUITE/InRelease when the packages were fetched. */
  archive_release_sha256: string;
  /** sha256 of the recipe: packages asked for, pruning, tsbm's boot files, kernel arguments. */
  recipe_sha256: string;
  kernel: string;
  kernel_args: string;
  /** Every installed package and its version, sorted by name. */
  packages: Record<string, string>;
  iso: { file: string; size: number; sha256: string };
}

export const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

export const cacheKeyOf = (m: Pick<RamdiskManifest, 'recipe_sha256' | 'archive_release_sha256'>): string =>
  `${m.recipe_sha256}:${m.archive_release_sha256}`;

/** The manifest at `file`, or undefined when there is none or it is not one of ours. */
export function readManifest(file: string): RamdiskManifest | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const m = JSON.parse(text) as RamdiskManifest;
    return m && m.format === 1 && typeof m.recipe_sha256 === 'string' && m.iso && typeof m.iso.sha256 === 'string' ? m : undefined;
  } catch {
    return undefined;
  }
}

/** Package name -> version of the installed packages in a dpkg status file. */
export function installedPackages(status: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const stanza of status.split(/\n\s*\n/)) {
    const field = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(stanza)?.[1]?.trim();
    const pkg = field('Package');
    const version = field('Version');
    if (pkg && version && / installed$/.test(field('Status') ?? '')) out[pkg] = version;
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
