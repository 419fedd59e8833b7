// The config drive's I/O on the ramdisk, by byte offset on the whole disk: loop devices and
// some ramdisks never get partition nodes, and offsets work the same on real hardware.
import { createHash } from 'node:crypto';
import type { ModuleContext } from '../modules/types.js';
import { hostError, mustExec } from '../deploy/ramdisk-exec.js';
import type { Partition } from './partition-table.js';

type Ctx = Pick<ModuleContext, 'host' | 'task' | 'exec'>;
const exec = (ctx: Ctx) => ctx.exec.bind(ctx);

/** Volume id of an ISO 9660 image starting at `offset`, or undefined (reads 72 bytes of its PVD). */
export async function isoLabelAt(ctx: Ctx, device: string, offset: number): Promise<string | undefined> {
  const r = await ctx.exec([
    'dd',
    `if=${device}`,
    'bs=72',
    'count=1',
    'iflag=skip_bytes',
    `skip=${offset + 16 * 2048}`,
    'status=none',
  ]);
  if (r.rc !== 0 || r.stdout.length < 72 || r.stdout.slice(1, 6) !== 'CD001') return undefined;
  return r.stdout.slice(40, 72).trimEnd();
}

/** Partitions that already are config drives: GPT name `config-2` or an ISO labelled `config-2`. */
export async function configDrivePartitions(
  ctx: Ctx,
  device: string,
  parts: Partition[],
): Promise<Partition[]> {
  const out: Partition[] = [];
  for (const p of parts) {
    if (p.name?.toLowerCase() === 'config-2') out.push(p);
    else if ((await isoLabelAt(ctx, device, p.offsetBytes))?.toLowerCase() === 'config-2') out.push(p);
  }
  return out;
}

export async function diskSizeBytes(ctx: Ctx, device: string): Promise<number> {
  const r = await mustExec(
    ctx,
    exec(ctx),
    ['blockdev', '--getsize64', device],
    `check that ${device} is a block device on the ramdisk`,
  );
  const n = Number(r.stdout.trim());
  if (!Number.isFinite(n) || n <= 0)
    throw hostError(ctx, `blockdev --getsize64 ${device} printed "${r.stdout.trim()}"`);
  return n;
}

/** SHA-256 of `length` bytes of the disk at `offset`: dd streams them here and they are hashed on the way. */
export async function sha256At(ctx: Ctx, device: string, offset: number, length: number): Promise<string> {
  const hash = createHash('sha256');
  let got = 0;
  await mustExec(
    ctx,
    exec(ctx),
    ['dd', `if=${device}`, 'bs=1M', 'iflag=skip_bytes,count_bytes', `skip=${offset}`, `count=${length}`, 'status=none'],
    undefined,
    {
      onStdout: (chunk) => {
        hash.update(chunk);
        got += chunk.length;
      },
    },
  );
  if (got !== length) throw hostError(ctx, `reading ${length} bytes of ${device} at byte ${offset} returned ${got}`, 'check that the disk is as large as it reports');
  return hash.digest('hex');
}

/** Writes `data` into the disk at `offset` (dd reads it on stdin), flushed before returning. */
export async function writeAt(ctx: Ctx, device: string, data: Buffer, offset: number): Promise<void> {
  await mustExec(
    ctx,
    exec(ctx),
    // fullblock: stdin is a pipe, whose reads may come short of 1 MiB.
    ['dd', `of=${device}`, 'bs=1M', 'iflag=fullblock', 'oflag=seek_bytes', `seek=${offset}`, 'conv=fsync,notrunc', 'status=none'],
    'check the disk is not read-only and not in use',
    { stdin: data },
  );
  // Drop cached pages so the read-back comes from the device, not from what we just wrote.
  await ctx.exec(['blockdev', '--flushbufs', device]);
}
