// The config drive's I/O on the ramdisk, by byte offset on the whole disk: loop devices and
// some ramdisks never get partition nodes, and offsets work the same on real hardware.
import { createHash } from 'node:crypto';
import type { ExecResult } from '../../connection/types.js';
import type { ModuleContext } from '../../module-api/types.js';
import { hostError, mustExec, mustSucceed } from '../../module-api/ramdisk-exec.js';
import { type PartitionTable, type Partition, parseSfdiskJson } from '../../configdrive/partition-table.js';

type Ctx = Pick<ModuleContext, 'host' | 'task' | 'exec' | 'execSteps'>;
const exec = (ctx: Ctx) => ctx.exec.bind(ctx);

const SFDISK_HINT = 'the ramdisk needs util-linux sfdisk; the disk needs a partition table (run bootc_install first)';

export const sfdiskArgv = (device: string) => ['sfdisk', '--json', device];

/** The partition table from an `sfdisk --json` result (a failure names the command). */
export function tableFrom(ctx: Ctx, device: string, r: ExecResult): PartitionTable {
  return parseSfdiskJson(mustSucceed(ctx, sfdiskArgv(device), r, SFDISK_HINT).stdout, device);
}

/** The disk's size and partition table, in one round trip. */
export async function diskAndTable(ctx: Ctx, device: string): Promise<{ diskBytes: number; table: PartitionTable }> {
  const size = ['blockdev', '--getsize64', device];
  const [sizeRes, sfdisk] = (await ctx.execSteps([size, sfdiskArgv(device)])) as [ExecResult, ExecResult];
  const r = mustSucceed(ctx, size, sizeRes, `check that ${device} is a block device on the ramdisk`);
  const n = Number(r.stdout.trim());
  if (!Number.isFinite(n) || n <= 0)
    throw hostError(ctx, `blockdev --getsize64 ${device} printed "${r.stdout.trim()}"`);
  return { diskBytes: n, table: tableFrom(ctx, device, sfdisk) };
}

/** Reads 72 bytes of the ISO 9660 primary volume descriptor of an image starting at `offset`. */
function pvdArgv(device: string, offset: number): string[] {
  return ['dd', `if=${device}`, 'bs=72', 'count=1', 'iflag=skip_bytes', `skip=${offset + 16 * 2048}`, 'status=none'];
}

/** Volume id from a PVD read, or undefined when it is no ISO 9660. */
function isoLabel(r: ExecResult): string | undefined {
  if (r.rc !== 0 || r.stdout.length < 72 || r.stdout.slice(1, 6) !== 'CD001') return undefined;
  return r.stdout.slice(40, 72).trimEnd();
}

/**
 * GPT types that hold the installed system, never a config drive: the EFI system partition
 * and the x86-64 / aarch64 root partitions bootc makes. Their ISO label is not read.
 */
const SYSTEM_TYPES = new Set([
  'C12A7328-F81F-11D2-BA4B-00A0C93EC93B',
  '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709',
  'B921B045-1DF0-41C3-AF44-4C6F280D3FAE',
]);

/** Partitions that already are config drives: GPT name `config-2` or an ISO labelled `config-2`. */
export async function configDrivePartitions(
  ctx: Ctx,
  device: string,
  parts: Partition[],
): Promise<Partition[]> {
  const named = (p: Partition) => p.name?.toLowerCase() === 'config-2';
  const unnamed = parts.filter((p) => !named(p) && !SYSTEM_TYPES.has(p.type.toUpperCase()));
  const reads = await ctx.execSteps(unnamed.map((p) => pvdArgv(device, p.offsetBytes)));
  const isoLabelled = new Set(unnamed.filter((_p, i) => isoLabel(reads[i] as ExecResult)?.toLowerCase() === 'config-2'));
  return parts.filter((p) => named(p) || isoLabelled.has(p));
}

/** SHA-256 of `length` bytes of the disk at `offset`: dd streams them here and they are hashed on the way. */
export async function sha256At(ctx: Ctx, device: string, offset: number, length: number): Promise<string> {
  const hash = createHash('sha256');
  let got = 0;
  await mustExec(
    ctx,
    exec(ctx),
    readArgv(device, offset, length),
    undefined,
    {
      onStdout: (chunk) => {
        hash.update(chunk);
        got += chunk.length;
      },
      // Hashed as it streams: what is kept is only for an error message.
      maxOutputBytes: 1024 * 1024,
    },
  );
  if (got !== length) throw hostError(ctx, `reading ${length} bytes of ${device} at byte ${offset} returned ${got}`, 'check that the disk is as large as it reports');
  return hash.digest('hex');
}

/** dd reading `length` bytes of the disk at `offset` to stdout. */
function readArgv(device: string, offset: number, length: number): string[] {
  return ['dd', `if=${device}`, 'bs=1M', 'iflag=skip_bytes,count_bytes', `skip=${offset}`, `count=${length}`, 'status=none'];
}

/**
 * The steps that write `data` (on the batch's stdin) into the disk at `offset`, flushed, and
 * read it back: dd, drop the cached pages so the read-back comes from the device, dd again.
 * `guard` wraps the writing dd (it must exec it, stdin untouched).
 */
export function writeSteps(device: string, data: Buffer, offset: number, guard: (dd: string[]) => string[] = (dd) => dd): string[][] {
  // fullblock: stdin is a pipe, whose reads may come short of 1 MiB.
  const dd = ['dd', `of=${device}`, 'bs=1M', 'iflag=fullblock', 'oflag=seek_bytes', `seek=${offset}`, 'conv=fsync,notrunc', 'status=none'];
  return [guard(dd), ['blockdev', '--flushbufs', device], readArgv(device, offset, data.length)];
}

/** Options for the batch that runs writeSteps as its steps from `first` on. */
export function writeBatchOptions(data: Buffer, first: number) {
  return {
    stdin: data,
    stdinStep: first,
    stdoutEncoding: 'latin1' as const,
    // The read-back is the check: keep all of it (the markers and a little more besides).
    maxOutputBytes: data.length + 1024 * 1024,
  };
}

/** The SHA-256 of what writeSteps read back (their three results); a failed write or read throws. */
export function readBackSha256(ctx: Ctx, device: string, data: Buffer, offset: number, [written, , readBack]: ExecResult[]): string {
  const [dd, , read] = writeSteps(device, data, offset);
  mustSucceed(ctx, dd as string[], written as ExecResult, 'check the disk is not read-only and not in use');
  mustSucceed(ctx, read as string[], readBack as ExecResult, 'check the disk is readable');
  const bytes = Buffer.from((readBack as ExecResult).stdout, 'latin1');
  if (bytes.length !== data.length) {
    throw hostError(ctx, `reading ${data.length} bytes of ${device} at byte ${offset} returned ${bytes.length}`, 'check that the disk is as large as it reports');
  }
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Writes `data` into the disk at `offset` (dd reads it on stdin), flushed, and reads it back in
 * the same round trip; returns the SHA-256 of what was read back.
 */
export async function writeAndReadBack(ctx: Ctx, device: string, data: Buffer, offset: number): Promise<string> {
  const results = await ctx.execSteps(writeSteps(device, data, offset), writeBatchOptions(data, 0));
  return readBackSha256(ctx, device, data, offset, results);
}
