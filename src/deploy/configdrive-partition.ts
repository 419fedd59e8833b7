// Creates the config drive partition the placement chose with sfdisk --append (on GPT after
// moving the backup header to the real end of the disk with sgdisk -e), then checks it with partx.
import type { ExecResult } from '../connection/types.js';
import type { ModuleContext } from '../module-api/types.js';
import { type PartitionExtent, parsePartxPairs, partxArgv } from './partx-table.js';
import { hostError, mustSucceed } from './ramdisk-exec.js';
import { sfdiskArgv, tableFrom } from './configdrive-disk-io.js';
import type { PartitionTable } from '../configdrive/partition-table.js';
import type { Placement } from '../configdrive/placement.js';

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
 * Creates the partition and checks that the table then has it where the plan put it, compared
 * in bytes: partx counts 512-byte units, the plan the disk's sectors (4096 on 4Kn disks).
 * Returns it as the table shows it.
 */
export async function createPartition(
  ctx: Ctx,
  device: string,
  p: Extract<Placement, { action: 'create' }>,
): Promise<PartitionExtent> {
  // sfdisk, not sgdisk, on GPT too: sgdisk syncs every filesystem and sleeps a second after
  // each write. Sectors given exactly are not realigned; sfdisk appends in the first free
  // slot, the number the placement chose, and the check below holds it to that.
  const create = ['sfdisk', '--append', '--no-reread', '--no-tell-kernel', device];
  // partx tells the kernel when it can listen; loop devices without partition scanning cannot, which is fine.
  // Then partx, not sfdisk, reads the table back: a third of sfdisk's CPU, and numbers and offsets are all this needs.
  const [made, , listed] = (await ctx.execSteps([create, ['partx', '-u', device], partxArgv(device)], {
    stdin: sfdiskScriptLine(p),
    stdinStep: 0,
  })) as [ExecResult, ExecResult, ExecResult];
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
  return got;
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
