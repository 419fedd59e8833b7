// Creates the config drive partition the placement chose: sgdisk on GPT (after moving the
// backup header to the real end of the disk), sfdisk --append on MBR.
import type { ModuleContext } from '../modules/types.js';
import { mustExec } from '../deploy/ramdisk-exec.js';
import type { Placement } from './placement.js';

type Ctx = Pick<ModuleContext, 'host' | 'task' | 'exec'>;

/** Moves the GPT backup header to the end of the disk (images written to bigger disks leave it short). */
export async function relocateGptBackup(ctx: Ctx, device: string): Promise<void> {
  await mustExec(ctx, ctx.exec.bind(ctx), ['sgdisk', '-e', device], 'the ramdisk needs gdisk (sgdisk)');
}

export async function createPartition(
  ctx: Ctx,
  device: string,
  p: Extract<Placement, { action: 'create' }>,
): Promise<void> {
  const exec = ctx.exec.bind(ctx);
  const end = p.startSector + p.sizeSectors - 1;
  if (p.label === 'gpt') {
    await mustExec(
      ctx,
      exec,
      ['sgdisk', '-n', `${p.number}:${p.startSector}:${end}`, '-c', `${p.number}:config-2`, device],
      'the ramdisk needs gdisk (sgdisk)',
    );
  } else {
    await mustExec(
      ctx,
      exec,
      ['sfdisk', '--append', '--no-reread', '--no-tell-kernel', device],
      'the ramdisk needs util-linux sfdisk',
      { stdin: `start=${p.startSector}, size=${p.sizeSectors}, type=83\n` },
    );
  }
  // Tell the kernel when it can listen; loop devices without partition scanning cannot, which is fine.
  await ctx.exec(['partx', '-u', device]);
}
