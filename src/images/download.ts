// Downloads one URL to a file while hashing it, resuming with an HTTP Range request after a
// dropped connection (the bytes already on disk are re-hashed, not re-fetched). Bounded: a
// server that goes quiet for idleMs is dropped (and resumed), the whole download has a
// deadline, the file a size cap, and a redirect never leaves https for plain http.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { pipeline } from 'node:stream/promises';
import { idleTimer } from '../util/idle-timer.js';
import { DEFAULT_LIMITS, fmtDuration, fmtLimit } from '../util/limits.js';
import { followRedirect, RedirectRefused } from '../util/redirect.js';
import { retry } from '../util/wait.js';

export interface DownloadOptions {
  algo: string;
  tlsVerify: boolean;
  retries: number;
  signal?: AbortSignal;
  onProgress?: (bytes: number, total: number | undefined) => void;
  onRetry?: (message: string) => void;
  /** Test hook: delay between retries. */
  retryDelayMs?: number;
  /** Largest file accepted (tsbm_max_download; default 64 GiB). */
  maxBytes?: number;
  /** A connection that delivers nothing for this long is dropped and resumed (default 120 s). */
  idleMs?: number;
  /** The whole download, every attempt included (default none: the caller's signal bounds it). */
  timeoutMs?: number;
}

class DownloadError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

async function hashExisting(file: string, h: Hash): Promise<number> {
  const st = await stat(file).catch(() => undefined);
  if (!st?.size) return 0;
  for await (const c of createReadStream(file)) h.update(c as Buffer);
  return st.size;
}

function get(
  url: string,
  headers: Record<string, string>,
  o: DownloadOptions,
  signal: AbortSignal,
): Promise<http.IncomingMessage> {
  const u = new URL(url);
  const lib = u.protocol === 'https:' ? https : http;
  return new Promise((ok, fail) => {
    const req = lib.get(
      u,
      {
        headers,
        ...(u.protocol === 'https:' ? { rejectUnauthorized: o.tlsVerify } : {}),
        signal,
      },
      ok,
    );
    req.on('error', fail);
  });
}

/** One attempt: resumes `part` when the server honours Range, else starts over. Returns the hex digest and size. */
async function attempt(
  url: string,
  part: string,
  o: DownloadOptions,
  redirects = 5,
): Promise<{ hash: string; size: number }> {
  const idleMs = o.idleMs ?? DEFAULT_LIMITS.downloadIdleMs;
  const idle = idleTimer(idleMs, () => new DownloadError(`the image server sent nothing for ${fmtDuration(idleMs)}`, false));
  const signal = o.signal ? AbortSignal.any([o.signal, idle.signal]) : idle.signal;
  try {
    return await attemptOnce(url, part, o, redirects, signal, idle.kick);
  } catch (e) {
    // The stall is the story, not the AbortError it caused.
    if (idle.signal.aborted && !o.signal?.aborted) throw idle.signal.reason;
    throw e;
  } finally {
    idle.stop();
  }
}

async function attemptOnce(
  url: string,
  part: string,
  o: DownloadOptions,
  redirects: number,
  signal: AbortSignal,
  kick: () => void,
): Promise<{ hash: string; size: number }> {
  const cap = o.maxBytes ?? DEFAULT_LIMITS.downloadBytes;
  const h = createHash(o.algo);
  const have = await hashExisting(part, h);
  const res = await get(url, have ? { Range: `bytes=${have}-` } : {}, o, signal);
  kick();
  const code = res.statusCode ?? 0;
  if ([301, 302, 303, 307, 308].includes(code) && res.headers.location && redirects > 0) {
    res.resume();
    let next: string;
    try {
      next = followRedirect(url, res.headers.location);
    } catch (e) {
      if (e instanceof RedirectRefused) throw new DownloadError(e.message, true);
      throw e;
    }
    return attemptOnce(next, part, o, redirects - 1, signal, kick);
  }
  if (code === 416 && have) {
    // The part already holds the whole file.
    res.resume();
    return { hash: h.digest('hex'), size: have };
  }
  if (code !== 200 && code !== 206) {
    res.resume();
    throw new DownloadError(`HTTP ${code} from the image server`, code >= 400 && code < 500);
  }
  const resumed = code === 206 && have > 0;
  const hash = resumed ? h : createHash(o.algo);
  const start = resumed ? have : 0;
  const len = Number(res.headers['content-length'] ?? Number.NaN);
  const total = Number.isFinite(len) ? start + len : undefined;
  const tooBig = () =>
    new DownloadError(`the image is larger than ${fmtLimit(cap)}; refused (raise tsbm_max_download if it is genuine)`, true);
  if (total !== undefined && total > cap) {
    res.destroy();
    throw tooBig();
  }
  let bytes = start;
  await pipeline(
    res,
    async function* (src) {
      for await (const c of src) {
        const b = c as Buffer;
        kick();
        bytes += b.length;
        if (bytes > cap) throw tooBig();
        hash.update(b);
        o.onProgress?.(bytes, total);
        yield b;
      }
    },
    createWriteStream(part, { flags: resumed ? 'a' : 'w' }),
  );
  if (total !== undefined && bytes !== total)
    throw new DownloadError(`connection closed after ${bytes} of ${total} bytes`, false);
  return { hash: hash.digest('hex'), size: bytes };
}

export async function downloadWithResume(
  url: string,
  part: string,
  o: DownloadOptions,
): Promise<{ hash: string; size: number }> {
  const deadline = o.timeoutMs !== undefined ? AbortSignal.timeout(o.timeoutMs) : undefined;
  const signal = deadline ? (o.signal ? AbortSignal.any([o.signal, deadline]) : deadline) : o.signal;
  const within = { ...o, ...(signal ? { signal } : {}) };
  return retry(() => attempt(url, part, within), {
    retries: o.retries,
    baseDelayMs: o.retryDelayMs ?? 1000,
    maxDelayMs: 30_000,
    ...(signal ? { signal } : {}),
    retryable: (e) => !(e instanceof DownloadError && e.permanent),
    onRetry: ({ attempt: n, retries, error }) =>
      o.onRetry?.(`download attempt ${n}/${retries}: ${(error as Error).message}; resuming`),
  }).catch((e: unknown) => {
    if (deadline?.aborted && !o.signal?.aborted) {
      throw new DownloadError(`the download did not finish within ${fmtDuration(o.timeoutMs ?? 0)}`, true);
    }
    throw e;
  });
}
