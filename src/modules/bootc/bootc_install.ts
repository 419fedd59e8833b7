// bootc_install: runs IPA's `podman run ... bootc install to-disk` against the chosen disk,
// with a timeout that kills podman, clear errors, and a check that a partition table exists.
import { Type } from '../../schema/type-builder.js';
import type { ExecResult } from '../../connection/types.js';
import { MIB } from '../../module-api/disk.js';
import { firstSet, truthy } from '../../inventory/node-data.js';
import { hostError, randomName } from '../../module-api/ramdisk-exec.js';
import { UnreachableError } from '../../errors.js';
import { defineModule, type ModuleContext } from '../../module-api/types.js';
import { BootcPlanError, authorizedKeysText, bootcInstallArgv, isNotBootcImage, rootSizeMiB, selinuxActive, tail, sfdiskPartitions } from './bootc-argv.js';
import { devicePathProblem } from '../../module-api/device-path.js';
import { ImageRefError, parseImageSource } from '../../module-api/image-ref.js';
import { partxArgv, parsePartxPairs } from '../../module-api/partx-table.js';
import { stepRan } from '../../connection/exec-steps.js';
import { guardVerdict, imageGuardArgv } from './bootc-image-guard.js';
import { parseLsblk } from '../../module-api/lsblk.js';

const args = Type.Object(
  {
    device: Type.Optional(
      Type.String({
        pattern: '^/dev/',
        description: 'Disk to install on, an absolute /dev/ path, e.g. "{{ root.device }}"; default: a registered root_device result',
      }),
    ),
    size_mib: Type.Optional(
      Type.Integer({
        minimum: 1,
        description:
          'Disk size in MiB ("{{ root.size_mib }}"); default: registered root_device result, else lsblk',
      }),
    ),
    image: Type.Optional(
      Type.String({ description: 'oci://registry/path:tag; default: instance_info.image_source' }),
    ),
    authorized_keys: Type.Optional(
      Type.Union([Type.String(), Type.Array(Type.String())], {
        description:
          'SSH keys for root in the installed system; default: instance_info.bootc_authorized_keys',
      }),
    ),
    tpm2_luks: Type.Optional(
      Type.Boolean({ description: 'Encrypt root bound to the TPM2; default: instance_info.bootc_tpm2_luks' }),
    ),
    extra_args: Type.Optional(
      Type.Array(Type.String(), {
        description: 'More bootc options, e.g. ["--karg=console=ttyS0"]',
        default: [],
      }),
    ),
    timeout: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Seconds before podman is killed', default: 3600 }),
    ),
  },
  { additionalProperties: false },
);

export const bootcInstallModule = defineModule({
  name: 'bootc_install',
  summary: 'Install the pulled bootc image to disk (bootc install to-disk, as Ironic Python Agent does)',
  description:
    'Runs `podman run --rm --privileged --pid=host --pull=never ... REF bootc install to-disk --wipe --skip-fetch-check --root-size=<disk MiB - 768>M ... DEVICE`, leaving room for the config drive. SELinux handling follows getenforce (as wait_agent read it in its probe, else asked here); the image must be pulled and fit the root partition (checked in the install step itself when wait_agent gave the SELinux mode); authorized keys go through a 0600 file under /tmp that is deleted afterwards. Verifies the disk has a partition table afterwards.',
  runsOn: 'target',
  args,
  checkMode: true,
  example: `- name: Install the image
  bootc_install:
    device: "{{ root.device }}"
    size_mib: "{{ root.size_mib }}"
    extra_args: ["--karg=console=ttyS0,115200"]`,
  async run(ctx, a) {
    const source = firstSet(a.image, ctx.vars, 'instance_info.image_source');
    if (typeof source !== 'string')
      throw hostError(ctx, 'no image to install', 'set instance_info.image_source');
    let ref: string;
    try {
      ref = parseImageSource(source).ref;
    } catch (e) {
      if (e instanceof ImageRefError) throw hostError(ctx, e.message, 'use oci://registry/path:tag');
      throw e;
    }
    const registered = findRootDeviceResult(ctx);
    const device = a.device ?? registered?.device;
    if (!device) {
      throw hostError(
        ctx,
        'no install device',
        'run root_device first (register: root) and pass device: "{{ root.device }}"',
      );
    }
    const badDevice = devicePathProblem(device);
    if (badDevice) {
      throw hostError(ctx, `refusing to install: the device ${badDevice}`, 'pass the whole disk as /dev/NAME, e.g. device: "{{ root.device }}"');
    }
    const diskMiB =
      a.size_mib ??
      (registered?.device === device ? registered.size_mib : undefined) ??
      (await lsblkSizeMiB(ctx, device));
    const keys = authorizedKeysText(
      firstSet(a.authorized_keys, ctx.vars, 'instance_info.bootc_authorized_keys'),
    );
    const tpm2Luks = a.tpm2_luks ?? truthy(firstSet(undefined, ctx.vars, 'instance_info.bootc_tpm2_luks'));
    // The SELinux mode wait_agent read in its probe: then the image checks ride in the
    // install's own step (modules/bootc/bootc-image-guard.ts) and nothing runs before it. Otherwise (and in
    // check mode) the mode and the pulled image are read first, in one round trip.
    const factsVar = ctx.vars.facts;
    const known = factsVar && typeof factsVar === 'object' ? (factsVar as Record<string, unknown>).ramdisk_selinux : undefined;
    const knownSelinux = typeof known === 'string' && known !== 'unknown' && !ctx.check ? known : undefined;
    let selinux: boolean;
    let inspected: ExecResult | undefined;
    if (knownSelinux !== undefined) {
      selinux = knownSelinux === 'absent' ? false : selinuxActive(0, knownSelinux);
    } else {
      const [ge, ins] = (await ctx.execSteps([['getenforce'], inspectArgv(ref)])) as [ExecResult, ExecResult];
      selinux = selinuxActive(ge.rc, ge.stdout);
      inspected = ins;
    }
    const keysFile = keys ? `/tmp/tsbm-authorized-keys-${randomName()}` : undefined;

    let argv: string[];
    try {
      argv = bootcInstallArgv({
        ref,
        device,
        diskMiB,
        selinux,
        tpm2Luks,
        extraArgs: a.extra_args ?? [],
        ...(keysFile ? { authorizedKeysFile: keysFile } : {}),
      });
    } catch (e) {
      if (e instanceof BootcPlanError)
        throw hostError(ctx, e.message, 'choose a bigger disk with root device hints');
      throw e;
    }
    const facts = { device, cmd: argv, root_size_mib: rootSizeMiB(diskMiB), selinux, tpm2_luks: tpm2Luks };
    // In check mode podman_pull pulled nothing, so a missing image is expected there.
    if (inspected) await checkImageFits(ctx, inspected, ref, device, diskMiB, !ctx.check);
    if (ctx.check) return { changed: true, msg: `would install ${ref} to ${device}`, ...facts };

    const timeoutS = a.timeout ?? 3600;
    const start = Date.now();
    let res: ExecResult;
    let table: ExecResult | undefined;
    let keysRemoved = false;
    try {
      if (keysFile && keys) await ctx.put(keys, keysFile, { mode: 0o600 });
      ctx.progress({ message: `bootc install to-disk ${device}` });
      // The install, then the keys file's removal and the new table's read, in one round trip
      // (the table read after a failed install is ignored). partx, not sfdisk: the label and a
      // count are all this needs, and partx costs about a third of sfdisk's CPU.
      const install = inspected ? argv : imageGuardArgv(ref, rootSizeMiB(diskMiB) * MIB, argv);
      const steps = [install, ...(keysFile ? [['rm', '-f', keysFile]] : []), partxArgv(device)];
      const results = await ctx.execSteps(steps, { timeout: timeoutS * 1000, signal: ctx.signal }).catch(
        async (e: unknown) => {
          // A lost connection is not a timeout: it keeps its own message (and unreachable status).
          if (ctx.signal.aborted || e instanceof UnreachableError) throw e;
          await killLeftovers(ctx, ref);
          const elapsed = Math.round((Date.now() - start) / 1000);
          throw hostError(
            ctx,
            `bootc install to-disk ${device} did not finish within ${timeoutS}s (ran ${elapsed}s); podman was killed: ${(e as Error).message}`,
            'raise timeout if the disk or image is large; check the node console for hardware errors',
            e,
          );
        },
      );
      res = results[0] as ExecResult;
      keysRemoved = !keysFile || stepRan(results[1] as ExecResult);
      if (res.rc === 0) table = results[results.length - 1];
    } finally {
      if (keysFile && !keysRemoved) await ctx.exec(['rm', '-f', keysFile]).catch(() => undefined);
    }
    const refused = inspected ? undefined : guardVerdict(res.rc, res.stderr);
    if (refused?.kind === 'missing') throw notPulled(ctx, ref);
    if (refused?.kind === 'too-big') throw tooBig(ctx, ref, device, diskMiB, rootSizeMiB(diskMiB), refused.bytes);
    const out = `${res.stdout}\n${res.stderr}`;
    if (res.rc !== 0) {
      if (isNotBootcImage(out)) {
        throw hostError(
          ctx,
          `image ${ref} is not a bootc image: it has no \`bootc\` executable`,
          'build the image FROM a bootc base image (e.g. quay.io/fedora/fedora-bootc, quay.io/centos-bootc/centos-bootc)',
        );
      }
      throw hostError(
        ctx,
        `bootc install to-disk ${device} failed (rc ${res.rc}):\n${tail(out)}`,
        'the message ends with the last lines bootc printed; the disk may be partially written, so fix the cause and deploy again',
      );
    }
    const parts = await partitionCount(ctx, device, table);
    if (!parts || parts.count === 0) {
      throw hostError(
        ctx,
        `bootc reported success but ${device} has no partitions afterwards`,
        'check that the device is the disk bootc wrote (root device hints)',
      );
    }
    const durationS = Math.round((Date.now() - start) / 1000);
    return {
      changed: true,
      msg: `installed ${ref} to ${device} (${parts.label}, ${parts.count} partitions) in ${durationS}s`,
      ...facts,
      partition_table: parts.label,
      partitions: parts.count,
      duration_s: durationS,
    };
  },
});

interface RootResult {
  device: string;
  size_mib: number;
}

/** A registered root_device result anywhere in the host's vars (e.g. `register: root`). */
function findRootDeviceResult(ctx: ModuleContext): RootResult | undefined {
  for (const v of Object.values(ctx.vars)) {
    if (v && typeof v === 'object') {
      const r = v as Record<string, unknown>;
      if (typeof r.device === 'string' && typeof r.size_mib === 'number' && typeof r.reason === 'string') {
        return { device: r.device, size_mib: r.size_mib };
      }
    }
  }
  return undefined;
}

async function lsblkSizeMiB(ctx: ModuleContext, device: string): Promise<number> {
  const r = await ctx.exec(['lsblk', '-J', '-b', '-O']);
  const d = r.rc === 0 ? parseLsblk(r.stdout).find((x) => x.name === device) : undefined;
  if (!d)
    throw hostError(
      ctx,
      `cannot find ${device} in lsblk output to size it`,
      'pass size_mib or run root_device first',
    );
  return Math.floor(d.sizeBytes / MIB);
}

/** Refuses before wiping when the unpacked image cannot fit the root partition bootc would make. */
function inspectArgv(ref: string): string[] {
  return ['podman', 'image', 'inspect', '--format', 'json', ref];
}

async function checkImageFits(
  ctx: ModuleContext,
  r: ExecResult,
  ref: string,
  device: string,
  diskMiB: number,
  mustExist: boolean,
): Promise<void> {
  if (r.rc !== 0) {
    if (!mustExist) return;
    throw notPulled(ctx, ref);
  }
  let size: number | undefined;
  try {
    size = (JSON.parse(r.stdout) as Array<{ Size?: number }>)[0]?.Size;
  } catch {
    size = undefined;
  }
  if (size !== undefined && size > rootSizeMiB(diskMiB) * MIB) throw tooBig(ctx, ref, device, diskMiB, rootSizeMiB(diskMiB), size);
}

function notPulled(ctx: ModuleContext, ref: string): Error {
  return hostError(ctx, `image ${ref} is not on the ramdisk`, 'run podman_pull before bootc_install (bootc_install uses --pull=never)');
}

function tooBig(ctx: ModuleContext, ref: string, device: string, diskMiB: number, rootMiB: number, bytes: number): Error {
  return hostError(
    ctx,
    `${device} is too small for ${ref}: the root partition would be ${rootMiB} MiB (disk ${diskMiB} MiB minus 768 MiB kept for the config drive) but the image is ${Math.ceil(bytes / MIB)} MiB unpacked`,
    'choose a bigger disk with root device hints, or a smaller image',
  );
}

/** After a timeout the podman client is killed; a container it started may still run. */
async function killLeftovers(ctx: ModuleContext, ref: string): Promise<void> {
  const ps = await ctx.exec(['podman', 'ps', '-q', '--filter', `ancestor=${ref}`]).catch(() => undefined);
  const ids =
    ps?.stdout
      .split('\n')
      .map((s) => s.trim())
      .filter(Boolean) ?? [];
  if (ids.length) await ctx.exec(['podman', 'rm', '-f', '-t', '0', ...ids]).catch(() => undefined);
}

/**
 * The table's label and partition count: from the batch's `partx -P`, else (partx missing, no
 * table, nothing printed) from `sfdisk --json`, else from `sgdisk -p` on ramdisks with neither.
 */
async function partitionCount(
  ctx: ModuleContext,
  device: string,
  px: ExecResult | undefined,
): Promise<{ label: string; count: number } | undefined> {
  const listed = px?.rc === 0 ? parsePartxPairs(px.stdout) : undefined;
  if (listed) return { label: listed.scheme, count: listed.partitions.length };
  const sf = await ctx.exec(['sfdisk', '--json', device]).catch(() => undefined);
  if (sf && sf.rc === 0) return sfdiskPartitions(sf.stdout);
  // Ramdisks without sfdisk usually have sgdisk (gdisk); count its partition lines.
  const sg = await ctx.exec(['sgdisk', '-p', device]).catch(() => undefined);
  if (sg?.rc !== 0 || !sg) return undefined;
  const rows = sg.stdout.split('\n').filter((l) => /^\s+\d+\s+\d+\s+\d+/.test(l));
  return { label: 'gpt', count: rows.length };
}
