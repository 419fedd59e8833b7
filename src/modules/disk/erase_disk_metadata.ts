// erase_disk_metadata: makes one disk look blank (no partition table, no file system, RAID,
// LVM or LUKS signatures) without zeroing all of it, as Ironic's metadata erase does when a
// node is cleaned. One disk only, named by the caller (the root_device choice): there is no
// "every disk" mode.
import { Type } from '../../schema/type-builder.js';
import type { ExecResult } from '../../connection/types.js';
import { hostError, mustSucceed } from '../../module-api/ramdisk-exec.js';
import { defineModule } from '../../module-api/types.js';
import { eraseRanges, verifyArgv, zeroArgv } from './erase-plan.js';
import { parsePartxPairs, partxArgv } from '../../module-api/partx-table.js';
import { devicePathProblem } from '../../module-api/device-path.js';

const args = Type.Object(
  {
    device: Type.String({
      pattern: '^/dev/',
      description: 'The whole disk to erase, normally "{{ root.device }}" (the disk root device hints chose)',
    }),
  },
  { additionalProperties: false },
);

const lastLines = (r: ExecResult) => (r.stderr || r.stdout).trim().split('\n').slice(-2).join(' | ');

export const eraseDiskMetadataModule = defineModule({
  name: 'erase_disk_metadata',
  summary: "Erase one disk's partition tables and signatures on the ramdisk (Ironic's metadata erase)",
  description:
    "Reads the disk's size (blockdev) and partitions (partx), runs `wipefs --all --force` on the disk when the ramdisk has it, zeroes the first and last MiB of every partition and of the disk with dd (by offset on the whole disk, so partitions need no device node), then checks those bytes read back as zeros and that no partition table is left. Returns device, size_bytes, partitions (found before) and ranges (bytes zeroed). In check mode it only reads.",
  runsOn: 'target',
  args,
  checkMode: true,
  idempotent: true,
  example: `- name: Erase the root disk's metadata
  erase_disk_metadata:
    device: "{{ root.device }}"`,
  async run(ctx, a) {
    const device = a.device;
    // The schema's pattern lets `/dev/../tmp/x` through; the rule bootc_install applies does not.
    const badDevice = devicePathProblem(device);
    if (badDevice) throw hostError(ctx, `refusing to erase: the device ${badDevice}`, 'pass the whole disk as /dev/NAME, e.g. device: "{{ root.device }}"');
    const [size, table, wipefs] = await ctx.execSteps([
      ['blockdev', '--getsize64', device],
      partxArgv(device),
      ['sh', '-c', 'command -v wipefs'],
    ]);
    mustSucceed(ctx, ['blockdev', '--getsize64', device], size as ExecResult, `is ${device} a block device on this ramdisk?`);
    const diskBytes = Number((size as ExecResult).stdout.trim());
    if (!Number.isSafeInteger(diskBytes) || diskBytes <= 0) {
      throw hostError(ctx, `blockdev says ${device} has ${JSON.stringify((size as ExecResult).stdout.trim())} bytes`, 'check the device');
    }
    // partx fails on a disk without a partition table: nothing to erase per partition then. A
    // missing partx is not that: erasing only the disk's ends would leave the partitions' signatures.
    if ((table as ExecResult).rc === 127) {
      throw hostError(ctx, `cannot list the partitions of ${device}: ${lastLines(table as ExecResult) || 'partx not found'}`, 'the erase needs partx (util-linux) on the ramdisk (docs/ramdisk.md)');
    }
    const partitions = (table as ExecResult).rc === 0 ? (parsePartxPairs((table as ExecResult).stdout)?.partitions ?? []) : [];
    const ranges = eraseRanges(diskBytes, partitions);
    const facts = {
      device,
      size_bytes: diskBytes,
      partitions: partitions.map((p) => ({ number: p.number, offset_bytes: p.offsetBytes, size_bytes: p.sizeBytes, ...(p.name ? { name: p.name } : {}) })),
      ranges: ranges.map((r) => ({ offset_bytes: r.offset, length_bytes: r.length })),
    };
    const what = `${device}: ${partitions.length} partition(s), ${ranges.length} range(s) of up to 1 MiB`;
    if (ctx.check) return { changed: true, msg: `would erase ${what}`, ...facts };

    const haveWipefs = (wipefs as ExecResult).rc === 0;
    const steps = [...(haveWipefs ? [['wipefs', '--all', '--force', device]] : []), ...ranges.map((r) => zeroArgv(device, r))];
    const written = await ctx.execSteps(steps, { signal: ctx.signal });
    for (const [i, argv] of steps.entries()) {
      const r = written[i] as ExecResult;
      // wipefs is belt and braces: the zeroed ranges do the work, so its failure is only noted.
      if (argv[0] === 'wipefs') {
        if (r.rc !== 0) ctx.warn(`wipefs on ${device} failed (rc ${r.rc}): ${lastLines(r)}; the zeroed ranges still erase the metadata`);
        continue;
      }
      mustSucceed(ctx, argv, r, `the partition table on ${device} may be half erased: run the undeploy again`);
    }
    // The kernel forgets the old partitions (a no-op where it never knew them).
    const checks = await ctx.execSteps([['blockdev', '--rereadpt', device], partxArgv(device), ...ranges.map((r) => verifyArgv(device, r))]);
    const after = checks[1] as ExecResult;
    const left = after.rc === 0 ? parsePartxPairs(after.stdout)?.partitions.length ?? 0 : 0;
    if (left > 0) {
      throw hostError(ctx, `${device} still shows ${left} partition(s) after the erase`, 'another process may hold the disk; check it on the ramdisk and run the undeploy again');
    }
    // cmp: 0 the same, 1 different; anything else (127: no cmp) means nothing was checked.
    const unchecked = checks.slice(2).find((r) => r.rc !== 0 && r.rc !== 1);
    if (unchecked) {
      throw hostError(
        ctx,
        `cannot check that ${device} reads back as zeros after the erase: cmp exited ${unchecked.rc}${lastLines(unchecked) ? ` (${lastLines(unchecked)})` : ''}`,
        'the erase needs cmp (diffutils or busybox) on the ramdisk (docs/ramdisk.md); run the undeploy again once it has it',
      );
    }
    const notZero = ranges.filter((_, i) => (checks[i + 2] as ExecResult).rc === 1);
    if (notZero.length > 0) {
      throw hostError(
        ctx,
        `${device} does not read back as zeros at ${notZero.map((r) => `${r.offset}+${r.length}`).join(', ')} after the erase`,
        'the disk may ignore writes (read-only, failing); check it on the ramdisk',
      );
    }
    return { changed: true, msg: `erased ${what}${haveWipefs ? ' (and wipefs)' : ''}`, ...facts };
  },
});
