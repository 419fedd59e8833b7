// Disk-side steps of an image deploy on the ramdisk: probing the target (block device or the
// simulated lab's file, O_DIRECT support), moving the GPT backup header to the disk end after
// a smaller image, and wiping the partition table of a half-written image.
import type { ModuleContext } from '../../module-api/types.js';

type Exec = Pick<ModuleContext, 'exec'>;

export async function isBlockDevice(ctx: Exec, device: string): Promise<boolean> {
  const r = await ctx.exec(['test', '-b', device]).catch(() => undefined);
  return r?.rc === 0;
}

/** Whether dd can open the device with O_DIRECT (block devices can; files on tmpfs often cannot). */
export async function directIoWorks(ctx: Exec, device: string): Promise<boolean> {
  const r = await ctx
    .exec([
      'dd',
      'if=/dev/zero',
      `of=${device}`,
      'bs=4096',
      'count=0',
      'oflag=direct',
      'conv=notrunc',
      'status=none',
    ])
    .catch(() => undefined);
  return r?.rc === 0;
}

/** The partition table label (gpt, dos) from sfdisk, or undefined when there is none. */
export async function tableLabel(ctx: Exec, device: string): Promise<string | undefined> {
  const r = await ctx.exec(['sfdisk', '--json', device]).catch(() => undefined);
  if (r?.rc !== 0 || !r) return undefined;
  try {
    const j = JSON.parse(r.stdout) as { partitiontable?: { label?: string } };
    return j.partitiontable?.label;
  } catch {
    return undefined;
  }
}

/**
 * An image smaller than the disk leaves its GPT backup header mid-disk; `sgdisk -e` moves it
 * to the end so configdrive_write (and the OS) can use the rest. Returns whether it ran.
 */
export async function relocateGptBackupHeader(
  ctx: Exec,
  device: string,
): Promise<{ ran: boolean; error?: string }> {
  if ((await tableLabel(ctx, device)) !== 'gpt') return { ran: false };
  const r = await ctx.exec(['sgdisk', '-e', device]);
  if (r.rc !== 0)
    return { ran: false, error: (r.stderr || r.stdout).trim().split('\n').slice(-2).join(' | ') };
  await ctx.exec(['partx', '-u', device]).catch(() => undefined);
  return { ran: true };
}

/**
 * Destroys the partition tables (GPT at both ends, MBR) and filesystem signatures, so a node
 * cannot boot half an image. Returns true when no partition table is left.
 */
export async function wipePartitionTable(ctx: Exec, device: string): Promise<boolean> {
  await ctx.exec(['sgdisk', '--zap-all', device]).catch(() => undefined);
  await ctx.exec(['wipefs', '-a', '-f', device]).catch(() => undefined);
  return (await tableLabel(ctx, device)) === undefined;
}
