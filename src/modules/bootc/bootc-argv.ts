// The exact `podman run ... bootc install to-disk` command IPA runs (README.md, the flow's step 7).
// Built as an argv array: nothing here is ever joined into a shell string.

/** Room left after the root partition for the 64 MiB config drive plus GPT and alignment. */
const CONFIGDRIVE_RESERVE_MIB = 768;

export interface BootcInstallPlan {
  ref: string;
  device: string;
  diskMiB: number;
  /** SELinux on the ramdisk is Enforcing or Permissive. */
  selinux: boolean;
  tpm2Luks: boolean;
  /** Path of the authorized_keys file on the ramdisk, under /tmp. */
  authorizedKeysFile?: string;
  extraArgs: string[];
}

export class BootcPlanError extends Error {}

export function rootSizeMiB(diskMiB: number): number {
  const n = Math.floor(diskMiB) - CONFIGDRIVE_RESERVE_MIB;
  if (n <= 0) {
    throw new BootcPlanError(
      `disk of ${diskMiB} MiB is too small: bootc needs more than the ${CONFIGDRIVE_RESERVE_MIB} MiB kept for the config drive`,
    );
  }
  return n;
}

export function bootcInstallArgv(p: BootcInstallPlan): string[] {
  const argv = [
    'podman',
    'run',
    '--rm',
    '--privileged',
    '--pid=host',
    '--pull=never',
    '-v',
    '/var/lib/containers:/var/lib/containers',
    '-v',
    '/dev:/dev',
  ];
  if (p.selinux) argv.push('--security-opt', 'label=type:unconfined_t');
  if (p.authorizedKeysFile) argv.push('-v', '/tmp:/tmp');
  argv.push(
    p.ref,
    'bootc',
    'install',
    'to-disk',
    '--wipe',
    '--skip-fetch-check',
    `--root-size=${rootSizeMiB(p.diskMiB)}M`,
  );
  if (p.tpm2Luks) argv.push('--block-setup=tpm2-luks');
  if (p.authorizedKeysFile) argv.push(`--root-ssh-authorized-keys=${p.authorizedKeysFile}`);
  if (!p.selinux) argv.push('--disable-selinux');
  for (const a of p.extraArgs) {
    // bootc reads the last positional as the device; a stray positional would retarget it.
    if (!a.startsWith('-'))
      throw new BootcPlanError(`extra_args entry "${a}" is not an option (must start with -)`);
  }
  argv.push(...p.extraArgs, p.device);
  return argv;
}

/** `getenforce` output to the label decision: Enforcing or Permissive means SELinux is on. */
export function selinuxActive(getenforceRc: number, stdout: string): boolean {
  if (getenforceRc !== 0) return false;
  const s = stdout.trim().toLowerCase();
  return s === 'enforcing' || s === 'permissive';
}

/** Authorized keys as one file body: a string or a list of keys. */
export function authorizedKeysText(v: unknown): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const keys = Array.isArray(v) ? v.map(String) : String(v).split('\n');
  const clean = keys.map((k) => k.trim()).filter((k) => k !== '');
  return clean.length ? `${clean.join('\n')}\n` : undefined;
}

/** True when podman failed because the image has no bootc binary. */
export function isNotBootcImage(output: string): boolean {
  return (
    /executable file [`'"]?bootc[`'"]? not found/i.test(output) ||
    /"bootc": executable file not found/i.test(output)
  );
}

export function tail(text: string, lines = 20): string {
  const all = text.trim().split('\n');
  return all.slice(-lines).join('\n');
}

/** Counts partitions in `sfdisk --json` output; undefined when there is no partition table. */
export function sfdiskPartitions(json: string): { label: string; count: number } | undefined {
  try {
    const doc = JSON.parse(json) as { partitiontable?: { label?: string; partitions?: unknown[] } };
    const t = doc.partitiontable;
    if (!t) return undefined;
    return { label: t.label ?? '?', count: Array.isArray(t.partitions) ? t.partitions.length : 0 };
  } catch {
    return undefined;
  }
}
