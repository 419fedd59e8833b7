// Raw images: streamed straight to the disk in one pass while hashing (Ironic's
// stream_raw_images). A dropped connection restarts the stream from the beginning (a hash
// cannot resume across processes); a failed or mismatching stream leaves no partition table.
// An image whose format the ramdisk's first look decided is looked at again on the disk: a
// server that showed raw bytes to that look and sent another format later fails the node.
import type { ModuleContext } from '../../module-api/types.js';
import { retry } from '../../util/wait.js';
import { wipePartitionTable } from './image-disk.js';
import { withUrl } from './image-fetch.js';
import { judgeHeader, peekFile } from './image-inspect.js';
import { ByteProgress, fmtBytes } from '../../module-api/image-progress.js';
import type { HashAlgo } from '../../module-api/image-source.js';
import { curlReason, curlRetryable, lastDdBytes, parseStreamOutput, streamArgv } from './image-stream.js';
import { hostError, randomName } from '../../module-api/ramdisk-exec.js';

export interface RawWrite {
  url: string;
  shownUrl: string;
  device: string;
  algo: HashAlgo;
  hash: string;
  tlsVerify: boolean;
  directIo: boolean;
  total: number | undefined;
  timeoutMs: number;
  retries: number;
  /** Inspect what landed on the disk (the format was decided from a separate first look at the URL). */
  recheck?: boolean;
}

class StreamInterrupted extends Error {}

export async function writeRawImage(
  ctx: ModuleContext,
  w: RawWrite,
): Promise<{ bytes: number; attempts: number }> {
  const deadline = Date.now() + w.timeoutMs;
  let attempts = 0;
  const fail = async (message: string, hint: string, cause?: unknown): Promise<never> => {
    const wiped = await wipePartitionTable(ctx, w.device);
    throw hostError(
      ctx,
      `${message}; ${wiped ? `the partition table on ${w.device} was wiped so the node cannot boot a partial image` : `wiping ${w.device} also failed: do not boot this node from disk`}`,
      hint,
      cause,
    );
  };
  try {
    return await retry(
      async () => {
        attempts++;
        const remaining = deadline - Date.now();
        if (remaining <= 0) {
          return fail(
            `writing ${w.shownUrl} to ${w.device} did not finish within ${Math.round(w.timeoutMs / 1000)}s`,
            'raise timeout for big images or slow links',
          );
        }
        const progress = new ByteProgress(`writing ${w.device}`, w.total, (u) => ctx.progress(u));
        let tail = '';
        const onStderr = (chunk: Buffer): void => {
          tail = (tail + chunk.toString('utf8')).slice(-400);
          const b = lastDdBytes(tail);
          if (b !== undefined) progress.update(b);
        };
        const argv = streamArgv({
          device: w.device,
          algo: w.algo,
          workDir: `/tmp/tsbm-image-${randomName()}`,
          directIo: w.directIo,
          tlsVerify: w.tlsVerify,
          connectTimeoutS: 30,
        });
        const r = await ctx
          .exec(argv, withUrl(w.url, { timeout: remaining, signal: ctx.signal, onStderr }))
          .catch(async (e: unknown) => {
            if (ctx.signal.aborted) throw e;
            return fail(
              `writing ${w.shownUrl} to ${w.device} did not finish within ${Math.round(w.timeoutMs / 1000)}s`,
              'raise timeout for big images or slow links',
              e,
            );
          });
        const out = parseStreamOutput(r.stdout, r.stderr);
        if (!out) {
          return fail(
            `the image stream to ${w.device} failed before it finished (rc ${r.rc}): ${r.stderr.trim().split('\n').slice(-3).join(' | ') || 'no output'}`,
            'the ramdisk needs sh, curl, tee, mkfifo, dd and sha256sum/sha512sum, and a writable /tmp',
          );
        }
        if (out.curlRc !== 0) {
          if (curlRetryable(out.curlRc))
            throw new StreamInterrupted(`${curlReason(out.curlRc)} after ${fmtBytes(out.bytes ?? 0)}`);
          return fail(
            `downloading ${w.shownUrl} failed (${curlReason(out.curlRc)})`,
            'check the image URL is right and reachable from the ramdisk',
          );
        }
        if (out.ddRc !== 0) {
          return fail(
            `dd could not write ${w.device} (rc ${out.ddRc}): ${r.stderr.trim().split('\n').slice(-2).join(' | ')}`,
            'check the image fits the disk and the disk is healthy',
          );
        }
        if (out.hash !== w.hash) {
          return fail(
            `${w.algo} of ${w.shownUrl} is ${out.hash || '(none computed)'} but image_os_hash_value is ${w.hash}`,
            'the image changed or the checksum belongs to another image: fix image_source or image_os_hash_value',
          );
        }
        if (w.recheck) {
          const v = judgeHeader(ctx.vars, await peekFile(ctx, w.device), { name: w.shownUrl, declared: 'raw' });
          if (!v.ok) return fail(`${v.message} (read back from ${w.device})`, 'the image server sent another format than its first bytes showed: fix the server');
        }
        progress.update(out.bytes ?? 0, true);
        return { bytes: out.bytes ?? 0, attempts };
      },
      {
        retries: w.retries,
        baseDelayMs: 2000,
        maxDelayMs: 30_000,
        signal: ctx.signal,
        retryable: (e) => e instanceof StreamInterrupted && Date.now() < deadline,
        onRetry: ({ attempt, retries, error }) => {
          const message = `${(error as Error).message}; restarting the stream from the beginning`;
          if (ctx.retry) ctx.retry({ attempt, retries, message });
          else ctx.log(message);
        },
      },
    );
  } catch (e) {
    if (e instanceof StreamInterrupted) {
      return fail(
        `downloading ${w.shownUrl} failed after ${attempts} attempt(s): ${e.message}`,
        'check the image server and the network to the ramdisk; raise retries',
      );
    }
    throw e;
  }
}
