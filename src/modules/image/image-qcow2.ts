// qcow2 images: qemu-img needs random access, so the image is downloaded to the ramdisk's
// tmpfs first (after checking it fits in MemAvailable), verified, inspected (its header comes
// back over the connection: no backing or data file, the virtual size within the disk and
// tsbm_max_image_virtual; then qemu-img info, told the format, under resource limits), converted
// onto the disk with `qemu-img convert -n -f qcow2` under resource limits (host_device for a
// block device, raw for the simulated lab's file), and deleted. The download resumes with HTTP
// Range requests after a dropped connection.
import { checkQemuInfo } from '../../images/inspect/qemu-info.js';
import { convertPercent, qemuImgConvertArgv, qemuImgInfoArgv } from '../../images/inspect/qemu-img.js';
import type { ModuleContext } from '../../module-api/types.js';
import { sleep } from '../../util/wait.js';
import { wipePartitionTable } from './image-disk.js';
import { downloadArgv, withUrl } from './image-fetch.js';
import { formatOrRefuse, peekFile } from './image-inspect.js';
import { ByteProgress, fmtBytes } from '../../module-api/image-progress.js';
import type { HashAlgo } from '../../module-api/image-source.js';
import { curlReason, hashProgram } from './image-stream.js';
import { MEMORY_MARGIN_BYTES, memAvailableBytes } from '../../module-api/memory.js';
import { hostError, randomName } from '../../module-api/ramdisk-exec.js';

export interface Qcow2Write {
  url: string;
  shownUrl: string;
  device: string;
  blockDevice: boolean;
  diskBytes: number | undefined;
  algo: HashAlgo;
  hash: string;
  tlsVerify: boolean;
  total: number | undefined;
  timeoutMs: number;
  retries: number;
  tmpDir: string;
  meminfoPath: string;
  /** image_disk_format as declared (the downloaded content must be qcow2 either way). */
  declared?: 'raw' | 'qcow2' | undefined;
}

/** Refuses a download that would not fit in the ramdisk's RAM (tmpfs), with numbers. */
export function memoryVerdict(size: number | undefined, meminfo: string): { ok: boolean; message?: string } {
  const avail = memAvailableBytes(meminfo);
  if (size === undefined || avail === undefined) return { ok: true };
  const need = size + MEMORY_MARGIN_BYTES;
  if (need <= avail) return { ok: true };
  return {
    ok: false,
    message: `the qcow2 image (${fmtBytes(size)}) plus ${fmtBytes(MEMORY_MARGIN_BYTES)} headroom does not fit in the ramdisk's memory (MemAvailable ${fmtBytes(avail)}); it is downloaded to tmpfs before conversion`,
  };
}

async function checkQcow2Memory(
  ctx: ModuleContext,
  w: Pick<Qcow2Write, 'total' | 'meminfoPath'>,
): Promise<void> {
  const mem = await ctx.exec(['cat', w.meminfoPath]).catch(() => undefined);
  if (w.total === undefined)
    ctx.warn('the image server sent no Content-Length: cannot check the image fits in the ramdisk memory');
  const v = memoryVerdict(w.total, mem?.rc === 0 ? mem.stdout : '');
  if (!v.ok) {
    throw hostError(
      ctx,
      v.message ?? 'not enough memory',
      'use a raw image (streamed to disk, needs no RAM), or give the ramdisk more memory',
    );
  }
}

export async function writeQcow2Image(
  ctx: ModuleContext,
  w: Qcow2Write,
): Promise<{ bytes: number; virtualSize: number }> {
  const deadline = Date.now() + w.timeoutMs;
  const left = (): number => Math.max(1000, deadline - Date.now());
  await checkQcow2Memory(ctx, w);
  const file = `${w.tmpDir}/tsbm-image-${randomName()}.qcow2`;
  try {
    // Download, reporting progress from the growing file's size.
    const progress = new ByteProgress(`downloading ${w.shownUrl}`, w.total, (u) => ctx.progress(u));
    let done = false;
    const poll = (async () => {
      while (!done) {
        await sleep(1000).catch(() => undefined);
        if (done) break;
        const st = await ctx.exec(['stat', '-c', '%s', file]).catch(() => undefined);
        if (st?.rc === 0) progress.update(Number(st.stdout.trim()));
      }
    })();
    const dl = await ctx
      .exec(
        downloadArgv(file, w.tlsVerify, w.retries),
        withUrl(w.url, { timeout: left(), signal: ctx.signal }),
      )
      .catch((e: unknown) => {
        if (ctx.signal.aborted) throw e;
        throw hostError(
          ctx,
          `downloading ${w.shownUrl} did not finish within ${Math.round(w.timeoutMs / 1000)}s`,
          'raise timeout',
          e,
        );
      })
      .finally(() => {
        done = true;
      });
    await poll;
    if (dl.rc !== 0) {
      throw hostError(
        ctx,
        `downloading ${w.shownUrl} failed (${curlReason(dl.rc)}): ${dl.stderr.trim().split('\n').slice(-2).join(' | ')}`,
        'check the image URL is right and reachable from the ramdisk',
      );
    }
    const sum = await ctx.exec([hashProgram(w.algo), file], { timeout: left() });
    const got = sum.stdout.trim().split(/\s+/)[0] ?? '';
    if (sum.rc !== 0 || got !== w.hash) {
      throw hostError(
        ctx,
        `${w.algo} of ${w.shownUrl} is ${got || '(none computed)'} but image_os_hash_value is ${w.hash}; ${w.device} was not touched`,
        'the image changed or the checksum belongs to another image: fix image_source or image_os_hash_value',
      );
    }
    // The checksum pins the bytes: what is inspected now is what qemu-img will read.
    const untouched = `${w.device} was not touched`;
    const found = formatOrRefuse(ctx, await peekFile(ctx, file), { name: w.shownUrl, declared: w.declared, state: untouched });
    if (found.format !== 'qcow2') {
      throw hostError(ctx, `${w.shownUrl} was qcow2 when first inspected, and the download is ${found.format}; ${untouched}`, 'the image server serves different bytes to different requests: fix the server');
    }
    const info = await ctx.exec(qemuImgInfoArgv('qcow2', file), { timeout: left() });
    const checked = info.rc === 0 ? checkQemuInfo(info.stdout, 'qcow2') : { problems: [`qemu-img info failed: ${info.stderr.trim().split('\n').at(-1) || `rc ${info.rc}`}`] };
    if (checked.problems.length || checked.virtualSize === undefined) {
      throw hostError(ctx, `${w.shownUrl} is refused: ${checked.problems.join('; ')}; ${untouched}`, 'publish a self-contained qcow2 image; the ramdisk needs qemu-img');
    }
    const virtualSize = checked.virtualSize;
    if (w.diskBytes !== undefined && virtualSize > w.diskBytes) {
      throw hostError(
        ctx,
        `the image's virtual size ${fmtBytes(virtualSize)} is larger than ${w.device} (${fmtBytes(w.diskBytes)})`,
        'choose a bigger disk with root device hints',
      );
    }
    // -n: write into the existing device instead of creating (and truncating) a target.
    const target = w.blockDevice ? 'host_device' : 'raw';
    const conv = new ByteProgress(`converting onto ${w.device}`, virtualSize, (u) => ctx.progress(u));
    const out = await ctx
      .exec(qemuImgConvertArgv({ format: 'qcow2', target, source: file, dest: w.device, existingTarget: true, timeoutMs: left() }), {
        timeout: left(),
        signal: ctx.signal,
        onStdout: (c) => {
          const p = convertPercent(c.toString('utf8'));
          if (p !== undefined) conv.update(Math.round((p / 100) * virtualSize));
        },
      })
      .catch((e: unknown) => ({ rc: -1, stdout: '', stderr: (e as Error).message }));
    if (out.rc !== 0) {
      const wiped = await wipePartitionTable(ctx, w.device);
      throw hostError(
        ctx,
        `qemu-img convert onto ${w.device} failed (rc ${out.rc}): ${out.stderr.trim().split('\n').slice(-2).join(' | ')}${wiped ? '; the partition table was wiped' : ''}`,
        'check the disk is healthy and large enough',
      );
    }
    conv.update(virtualSize, true);
    return { bytes: virtualSize, virtualSize };
  } finally {
    await ctx.exec(['rm', '-f', file]).catch(() => undefined);
  }
}
