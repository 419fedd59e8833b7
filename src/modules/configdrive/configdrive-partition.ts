// Creates the config drive partition the placement chose with sfdisk --append (on GPT after
// moving the backup header to the real end of the disk with sgdisk -e), then checks it with partx.
import type { ExecResult } from '../../connection/types.js';
import type { ModuleContext } from '../../module-api/types.js';
import { stepRan } from '../../connection/exec-steps.js';
import { PARTX_UNIT_BYTES, type PartitionExtent, parsePartxPairs, partxArgv } from '../../module-api/partx-table.js';
import { hostError, mustSucceed } from '../../module-api/ramdisk-exec.js';
import { readBackSha256, sfdiskArgv, tableFrom, writeBatchOptions, writeSteps } from './configdrive-disk-io.js';
import type { PartitionTable } from '../../configdrive/partition-table.js';
import type { Placement } from '../../configdrive/placement.js';

type Ctx = Pick<ModuleContext, 'host' | 'task' | 'exec' | 'execSteps'>;

/**
 * Moves the GPT backup header to the end of the disk (images written to bigger disks leave it
 * short) and returns the table after it: lastlba moves with the backup header.
 */
export async function relocateGptBackup(ctx: Ctx, device: string): Promise<PartitionTable> {
  const move = ['sgdisk', '-e', device];
  const [moved, table] = (await ctx.execSteps([move, sfdiskArgv(device)])) as [ExecResult, ExecResult];
  mustSucceed(ctx, move, moved, 'the ramdisk needs gdisk (sgdisk)');
  return tableFrom(ctx, device, table);
}

/**
 * The guard around the config drive's dd when it rides in the partition's own batch: dd runs
 * only when partx shows the new partition starting where the plan put it (the same check
 * createPartition makes on the controller, made on the ramdisk before anything is written).
 * Exits GUARD_NO_PARTX when partx cannot tell (the controller then checks with sfdisk and
 * writes in a round trip of its own), GUARD_MOVED when the partition is elsewhere.
 */
const GUARD_NO_PARTX = 126;
const GUARD_MOVED = 124;
const PLACED_GUARD = `n=$1 dev=$2 want=$3; shift 3
got=$(partx -g -o START -n "$n" "$dev" </dev/null) || { echo "partx could not read partition $n of $dev" >&2; exit ${GUARD_NO_PARTX}; }
got=$(echo $got)
[ -n "$got" ] || { echo "partition $n is not in the table of $dev: nothing written" >&2; exit ${GUARD_MOVED}; }
[ "$got" = "$want" ] || { echo "partition $n of $dev starts at 512-byte sector $got, not $want: nothing written" >&2; exit ${GUARD_MOVED}; }
exec "$@"`;

/**
 * Creates the partition and checks that the table then has it where the plan put it, compared
 * in bytes: partx counts 512-byte units, the plan the disk's sectors (4096 on 4Kn disks).
 * With `data`, the same round trip writes it into the new partition (guarded on the ramdisk by
 * the same check) and reads it back: `readBack` is the SHA-256 of what was read, or undefined
 * when the guard could not run (no partx) and the caller still has to write.
 */
export async function createPartition(
  ctx: Ctx,
  device: string,
  p: Extract<Placement, { action: 'create' }>,
  data?: Buffer,
): Promise<{ extent: PartitionExtent; readBack?: string }> {
  // sfdisk, not sgdisk, on GPT too: sgdisk syncs every filesystem and sleeps a second after
  // each write. Sectors given exactly are not realigned; sfdisk appends in the first free
  // slot, the number the placement chose, and the check below holds it to that.
  const create = ['sfdisk', '--append', '--no-reread', '--no-tell-kernel', device];
  // With data on stdin for dd, sfdisk's one-line script comes from argv (it is no secret).
  const createStep = data ? ['sh', '-c', 'script=$1; shift; printf %s "$script" | "$@"', 'sh', sfdiskScriptLine(p), ...create] : create;
  // partx tells the kernel when it can listen; loop devices without partition scanning cannot, which is fine.
  // Then partx, not sfdisk, reads the table back: a third of sfdisk's CPU, and numbers and offsets are all this needs.
  const head = [createStep, ['partx', '-u', device], partxArgv(device)];
  const guard = (dd: string[]) => ['sh', '-c', PLACED_GUARD, 'sh', String(p.number), device, String(p.offsetBytes / PARTX_UNIT_BYTES), ...dd];
  const results = await ctx.execSteps(
    data ? [...head, ...writeSteps(device, data, p.offsetBytes, guard)] : head,
    data ? writeBatchOptions(data, head.length) : { stdin: sfdiskScriptLine(p), stdinStep: 0 },
  );
  const [made, , listed] = results as [ExecResult, ExecResult, ExecResult];
  mustSucceed(ctx, create, made, 'the ramdisk needs util-linux sfdisk');
  const after = (listed.rc === 0 ? parsePartxPairs(listed.stdout)?.partitions : undefined) ?? (await sfdiskExtents(ctx, device));
  const got = after.find((x) => x.number === p.number);
  if (got?.offsetBytes !== p.offsetBytes) {
    throw hostError(
      ctx,
      got
        ? `partition ${p.number} of ${device} starts at byte ${got.offsetBytes} after creating it, not at byte ${p.offsetBytes}`
        : `partition ${p.number} is not in the table of ${device} after creating it`,
      'check the partition table with sfdisk -l',
    );
  }
  if (!data) return { extent: got };
  const written = results.slice(head.length);
  const guarded = written[0] as ExecResult;
  if (guarded.rc === GUARD_NO_PARTX || !stepRan(guarded)) return { extent: got };
  if (guarded.rc === GUARD_MOVED) throw hostError(ctx, guarded.stderr.trim(), 'check the partition table with sfdisk -l');
  return { extent: got, readBack: readBackSha256(ctx, device, data, p.offsetBytes, written) };
}

/** Linux filesystem data, the type sgdisk gives a new partition by default. */
const GPT_LINUX_DATA = '0FC63DAF-8483-4772-8E79-3D69D8477DE4';

/** The one-partition sfdisk script: GPT names it config-2 (found by label later); MBR has no names. */
function sfdiskScriptLine(p: Extract<Placement, { action: 'create' }>): string {
  const where = `start=${p.startSector}, size=${p.sizeSectors}`;
  return p.label === 'gpt' ? `${where}, type=${GPT_LINUX_DATA}, name=config-2\n` : `${where}, type=83\n`;
}

/** Without partx (or when it printed nothing): the same extents from `sfdisk --json`, in bytes. */
async function sfdiskExtents(ctx: Ctx, device: string): Promise<PartitionExtent[]> {
  const table = tableFrom(ctx, device, await ctx.exec(sfdiskArgv(device)));
  return table.partitions.map((x) => ({
    number: x.number,
    offsetBytes: x.offsetBytes,
    sizeBytes: x.sizeBytes,
    ...(x.name ? { name: x.name } : {}),
  }));
}
