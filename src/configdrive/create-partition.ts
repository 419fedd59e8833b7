// Creates the config drive partition the placement chose: sgdisk on GPT (after moving the
// backup header to the real end of the disk), sfdisk --append on MBR.
import type { ExecResult } from '../connection/types.js';
import type { ModuleContext } from '../modules/types.js';
import { mustSucceed } from '../deploy/ramdisk-exec.js';
import { sfdiskArgv, tableFrom } from './disk-io.js';
import type { PartitionTable } from './partition-table.js';
import type { Placement } from './placement.js';

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

/** Creates the partition; returns the table after it (the caller checks the partition is there). */
export async function createPartition(
  ctx: Ctx,
  device: string,
  p: Extract<Placement, { action: 'create' }>,
): Promise<PartitionTable> {
  const end = p.startSector + p.sizeSectors - 1;
  const create =
    p.label === 'gpt'
      ? ['sgdisk', '-n', `${p.number}:${p.startSector}:${end}`, '-c', `${p.number}:config-2`, device]
      : ['sfdisk', '--append', '--no-reread', '--no-tell-kernel', device];
  // partx tells the kernel when it can listen; loop devices without partition scanning cannot, which is fine.
  const [made, , table] = (await ctx.execSteps([create, ['partx', '-u', device], sfdiskArgv(device)], {
    ...(p.label === 'gpt' ? {} : { stdin: `start=${p.startSector}, size=${p.sizeSectors}, type=83\n`, stdinStep: 0 }),
  })) as [ExecResult, ExecResult, ExecResult];
  mustSucceed(ctx, create, made, p.label === 'gpt' ? 'the ramdisk needs gdisk (sgdisk)' : 'the ramdisk needs util-linux sfdisk');
  return tableFrom(ctx, device, table);
}
