// What a ramdisk must have for each deploy (and for undeploy.yml's erase): the programs the
// modules call there, which of them are optional, and the oldest podman the bootc deploy works with. docs/ramdisk.md is the
// operator's version of this table (a test keeps the two in step); wait_agent checks it in the
// probe it already runs, so a ramdisk that lacks something fails before any disk is touched.
import type { Vars } from '../../types.js';
import { parsePodmanVersion } from '../../module-api/podman-version.js';
import { firstSet, getPath } from '../../inventory/node-data.js';
import type { Deploy } from '../../module-api/arg-names.js';


/** The oldest podman the bootc deploy is known to work with (Debian 12 ships 4.3). */
const MIN_PODMAN: readonly [number, number] = [4, 0];

export interface Need {
  /** Programs of which any one will do (found with the shell's `command -v`). */
  anyOf: readonly string[];
  /** The modules that call it, for the failure line. */
  usedBy: string;
  /** Set when the deploy works without it: what is lost then. */
  optional?: string;
  /** Only needed for some nodes: when the node's vars say so. */
  when?: { label: string; test: (vars: Vars) => boolean };
}

const hasConfigDrive = {
  label: 'with instance_info.configdrive',
  test: (v: Vars) => {
    const c = getPath(v, 'instance_info.configdrive');
    return c !== undefined && c !== null && c !== '';
  },
};

const hintsByPath = {
  label: 'with a by_path root device hint',
  test: (v: Vars) => {
    const h = firstSet(undefined, v, 'instance_info.root_device', 'properties.root_device');
    return typeof h === 'object' && h !== null && 'by_path' in h;
  },
};

const hasPullSecret = {
  label: 'with instance_info.image_pull_secret',
  test: (v: Vars) => {
    const p = getPath(v, 'instance_info.image_pull_secret');
    return p !== undefined && p !== null && p !== '';
  },
};

const qcow2 = {
  label: 'with instance_info.image_disk_format: qcow2',
  test: (v: Vars) => String(firstSet(undefined, v, 'instance_info.image_disk_format') ?? 'raw') === 'qcow2',
};
const hashAlgo = (v: Vars) => String(firstSet(undefined, v, 'instance_info.image_os_hash_algo') ?? 'sha256');

/** Every deploy reaches the node over SSH and runs its probes in a POSIX shell. */
const BASE: Need[] = [
  { anyOf: ['sh'], usedBy: 'every command batch' },
  { anyOf: ['cat'], usedBy: 'wait_agent' },
  {
    anyOf: ['ip'],
    usedBy: 'wait_agent',
    optional: 'identity by MAC address (`ip -j link`, iproute2 4.13 or later)',
  },
];

/** Writing files (podman drop-ins, the pull secret) where the SSH server has no SFTP. */
const PIPED_TRANSFER: Need[] = [
  { anyOf: ['chmod'], usedBy: 'file transfer without SFTP, podman_pull (its drop-ins)' },
  { anyOf: ['mv'], usedBy: 'file transfer without SFTP, podman_pull (its drop-ins)' },
  { anyOf: ['rm'], usedBy: 'file transfer without SFTP, podman_pull, bootc_install' },
  { anyOf: ['wc'], usedBy: 'file transfer without SFTP' },
  {
    anyOf: ['sha256sum', 'openssl', 'shasum', 'md5sum'],
    usedBy: 'file transfer without SFTP',
    optional: 'a hash check of files sent without SFTP (the size is still checked)',
  },
];

const ROOT_DISK: Need[] = [
  { anyOf: ['lsblk'], usedBy: 'root_device' },
  { anyOf: ['find'], usedBy: 'root_device', when: hintsByPath },
];

const PARTX: Need = {
  anyOf: ['partx'],
  usedBy: 'configdrive_write, bootc_install',
  optional: 'the cheaper partition read-back (sfdisk --json is used instead)',
};

const CONFIG_DRIVE: Need[] = [
  { anyOf: ['blockdev'], usedBy: 'configdrive_write', when: hasConfigDrive },
  { anyOf: ['dd'], usedBy: 'configdrive_write', when: hasConfigDrive },
  { anyOf: ['sfdisk'], usedBy: 'configdrive_write', when: hasConfigDrive },
  PARTX,
];

const FINISH: Need[] = [{ anyOf: ['sync'], usedBy: 'finish (flush the disk)' }];

const CONTRACT: Record<Deploy, (vars: Vars) => Need[]> = {
  bootc: () => [
    ...BASE,
    ...PIPED_TRANSFER,
    ...ROOT_DISK,
    { anyOf: ['podman'], usedBy: 'podman_pull, bootc_install' },
    { anyOf: ['mkdir'], usedBy: 'podman_pull' },
    // The pull secret's directory is made fresh and its mode checked (src/modules/bootc/secret-dir.ts).
    ...['stat', 'id', 'dirname', 'rmdir', 'ls'].map((p) => ({
      anyOf: [p],
      usedBy: "podman_pull (the pull secret's directory)",
      when: hasPullSecret,
    })),
    { anyOf: ['uname'], usedBy: 'podman_pull (memory preflight)' },
    {
      anyOf: ['skopeo'],
      usedBy: 'podman_pull',
      optional: 'reading the image size with skopeo (podman manifest inspect is used instead)',
    },
    {
      anyOf: ['getenforce'],
      usedBy: 'bootc_install',
      optional: 'SELinux detection (without it bootc gets --disable-selinux)',
    },
    ...CONFIG_DRIVE,
    {
      anyOf: ['sgdisk'],
      usedBy: 'configdrive_write, bootc_install',
      optional: 'moving a GPT backup header that is short of the disk end (bootc writes it at the end)',
    },
    ...FINISH,
  ],
  image: (vars) => [
    ...BASE,
    ...ROOT_DISK,
    { anyOf: ['mkdir'], usedBy: 'image_write' },
    { anyOf: ['rm'], usedBy: 'image_write' },
    { anyOf: ['curl'], usedBy: 'image_write (download; 7.71 or later for qcow2 retries)' },
    { anyOf: ['dd'], usedBy: 'image_write (GNU coreutils: status=progress), configdrive_write' },
    { anyOf: ['blockdev'], usedBy: 'image_write, configdrive_write' },
    { anyOf: ['tee'], usedBy: 'image_write (raw stream)' },
    { anyOf: ['mkfifo'], usedBy: 'image_write (raw stream)' },
    { anyOf: ['cut'], usedBy: 'image_write (raw stream)' },
    { anyOf: [`${hashAlgo(vars)}sum`], usedBy: `image_write (image_os_hash_algo ${hashAlgo(vars)})` },
    { anyOf: ['sfdisk'], usedBy: 'image_write, configdrive_write' },
    {
      anyOf: ['sgdisk'],
      usedBy: 'image_write (GPT backup header to the disk end; wipe after a failed write)',
    },
    {
      anyOf: ['wipefs'],
      usedBy: 'image_write',
      optional: 'a second way to wipe signatures after a failed write (sgdisk --zap-all is the first)',
    },
    { anyOf: ['qemu-img'], usedBy: 'image_write', when: qcow2 },
    { anyOf: ['stat'], usedBy: 'image_write', optional: 'download progress of qcow2 images', when: qcow2 },
    // configdrive_write's blockdev, dd and sfdisk are required above anyway.
    PARTX,
    ...FINISH,
  ],
  // The ISO is the instance: nothing is written, tsbm only waits for its SSH.
  ramdisk: () => [...BASE],
  // undeploy.yml: erase_disk_metadata on the disk the hints choose; no podman, nothing written but zeros.
  undeploy: () => [
    ...BASE,
    ...ROOT_DISK,
    { anyOf: ['blockdev'], usedBy: 'erase_disk_metadata' },
    { anyOf: ['partx'], usedBy: "erase_disk_metadata (the disk's partitions)" },
    { anyOf: ['dd'], usedBy: 'erase_disk_metadata' },
    { anyOf: ['cmp'], usedBy: 'erase_disk_metadata (reads the erased bytes back)' },
    {
      anyOf: ['wipefs'],
      usedBy: 'erase_disk_metadata',
      optional: 'wipefs --all before the zeroing (the zeroed ranges do the erase)',
    },
  ],
};

/** What `deploy` needs on this node (conditional needs resolved against its vars). */
export function needsFor(deploy: Deploy, vars: Vars): Need[] {
  return CONTRACT[deploy](vars).filter((n) => !n.when || n.when.test(vars));
}

/** Every need of a deploy, conditional ones included (for the docs check). */
export function allNeeds(deploy: Deploy, vars: Vars = {}): Need[] {
  return CONTRACT[deploy](vars);
}

// Prints the names it cannot find, one a line; builtins only, so one process.
const PROBE = 'for p do command -v "$p" >/dev/null 2>&1 || printf "%s\\n" "$p"; done';

/** The probe step: argv that prints every program of `needs` the ramdisk lacks. */
export function contractProbeArgv(needs: readonly Need[]): string[] {
  const names = [...new Set(needs.flatMap((n) => n.anyOf))];
  return ['sh', '-c', PROBE, 'sh', ...names];
}

export interface ContractVerdict {
  /** Required needs with none of their programs found. */
  missing: Need[];
  /** Optional needs with none of their programs found. */
  degraded: Need[];
  /** Set when podman is there but older than MIN_PODMAN. */
  podmanTooOld?: string;
}

export function judgeContract(
  needs: readonly Need[],
  probeStdout: string,
  podmanVersion?: string,
): ContractVerdict {
  const absent = new Set(
    probeStdout
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean),
  );
  const unmet = needs.filter((n) => n.anyOf.every((p) => absent.has(p)));
  const verdict: ContractVerdict = {
    missing: unmet.filter((n) => !n.optional),
    degraded: unmet.filter((n) => n.optional),
  };
  if (podmanVersion !== undefined && needs.some((n) => n.anyOf.includes('podman')) && !absent.has('podman')) {
    const v = parsePodmanVersion(podmanVersion);
    if (!v || v[0] < MIN_PODMAN[0] || (v[0] === MIN_PODMAN[0] && v[1] < MIN_PODMAN[1])) {
      verdict.podmanTooOld = v ? v.join('.') : `unknown (${podmanVersion.trim() || 'no output'})`;
    }
  }
  return verdict;
}

function name(n: Need): string {
  return n.anyOf.length === 1 ? (n.anyOf[0] as string) : `one of ${n.anyOf.join('/')}`;
}

/** The one line a failed check reports, or undefined when the ramdisk meets the contract. */
export function contractFailure(deploy: Deploy, v: ContractVerdict): string | undefined {
  const parts: string[] = [];
  if (v.missing.length)
    parts.push(
      `missing ${v.missing.map((n) => `${name(n)} (${n.usedBy}${n.when ? `, ${n.when.label}` : ''})`).join(', ')}`,
    );
  if (v.podmanTooOld) parts.push(`podman ${v.podmanTooOld} is older than ${MIN_PODMAN.join('.')}`);
  if (!parts.length) return undefined;
  const what = deploy === 'undeploy' ? 'an undeploy (erase)' : `${/^[aeiou]/.test(deploy) ? 'an' : 'a'} ${deploy} deploy`;
  return `the ramdisk cannot do ${what}: ${parts.join('; ')}`;
}

/** What the node does without, for a log line. */
export function degradedNote(v: ContractVerdict): string | undefined {
  if (!v.degraded.length) return undefined;
  return `the ramdisk lacks optional ${v.degraded.map((n) => `${name(n)} (no ${n.optional})`).join(', ')}`;
}
