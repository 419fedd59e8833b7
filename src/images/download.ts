// Downloads one URL to a file while hashing it, resuming with an HTTP Range request after a
// dropped connection (the bytes already on disk are re-hashed, not re-fetched).
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { pipeline } from 'node:stream/promises';
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
}

export class DownloadError extends Error {
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
): Promise<http.IncomingMessage> {
  const u = new URL(url);
  const lib = u.protocol === 'https:' ? https : http;
  return new Promise((ok, fail) => {
    const req = lib.get(
      u,
      {
        headers,
        ...(u.protocol === 'https:' ? { rejectUnauthorized: o.tlsVerify } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
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
  const h = createHash(o.algo);
  const have = await hashExisting(part, h);
  const res = await get(url, have ? { Range: `bytes=${have}-` } : {}, o);
  const code = res.statusCode ?? 0;
  if ([301, 302, 303, 307, 308].includes(code) && res.headers.location && redirects > 0) {
    res.resume();
    return attempt(new URL(res.headers.location, url).href, part, o, redirects - 1);
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
  let bytes = start;
  await pipeline(
    res,
    async function* (src) {
      for await (const c of src) {
        const b = c as Buffer;
        hash.update(b);
        bytes += b.length;
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
  return retry(() => attempt(url, part, o), {
    retries: o.retries,
    baseDelayMs: o.retryDelayMs ?? 1000,
    maxDelayMs: 30_000,
    ...(o.signal ? { signal: o.signal } : {}),
    retryable: (e) => !(e instanceof DownloadError && e.permanent),
    onRetry: ({ attempt: n, retries, error }) =>
      o.onRetry?.(`download attempt ${n}/${retries}: ${(error as Error).message}; resuming`),
  });
}
