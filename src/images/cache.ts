// The controller-side image cache (Ironic's image_download_source = local): an http(s) image is
// downloaded once into the cache directory, verified against its checksum, named by it, and
// served to every ramdisk by the run's HTTP file server. Downloads of the same image share one
// promise inside a run and a lock file across runs; least recently used images are evicted
// beyond the size bound.
import { mkdir, rename, stat, unlink, utimes } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { downloadWithResume } from './download.js';
import { acquireLock } from './lock.js';
import { evict } from './lru.js';

export const DEFAULT_CACHE_DIR = '.tsbm/images';

export interface CacheRequest {
  url: string;
  algo: 'sha256' | 'sha512' | 'md5';
  hash: string;
  dir: string;
  /** Evict least recently used images beyond this many bytes (the requested one always stays). */
  maxBytes?: number;
  tlsVerify?: boolean;
  retries?: number;
  /** Bounds of the download itself (see download.ts). */
  downloadMaxBytes?: number;
  idleMs?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (bytes: number, total: number | undefined) => void;
  onLog?: (message: string) => void;
}

export interface CachedImage {
  file: string;
  size: number;
  /** True when this call downloaded it (false: cache hit or another request's download). */
  downloaded: boolean;
}

export class ImageCacheError extends Error {}

const inflight = new Map<string, Promise<CachedImage>>();
/** Files requested in this process: never evicted while the run may still serve them. */
const pinned = new Set<string>();

/** Keeps a file of the cache (a converted raw image) from eviction for this process's life. */
export function pinCacheFile(file: string): void {
  pinned.add(file);
}

export function cacheFile(dir: string, algo: string, hash: string): string {
  return join(resolve(dir), `${algo}-${hash.toLowerCase()}.img`);
}

export function cachedImage(req: CacheRequest): Promise<CachedImage> {
  const file = cacheFile(req.dir, req.algo, req.hash);
  pinned.add(file);
  let p = inflight.get(file);
  if (!p) {
    p = fetchOnce(req, file).finally(() => inflight.delete(file));
    inflight.set(file, p);
    return p;
  }
  return p.then((r) => ({ ...r, downloaded: false }));
}

async function present(file: string): Promise<number | undefined> {
  const st = await stat(file).catch(() => undefined);
  return st?.isFile() ? st.size : undefined;
}

async function fetchOnce(req: CacheRequest, file: string): Promise<CachedImage> {
  const dir = resolve(req.dir);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const hit = async (): Promise<CachedImage | undefined> => {
    const size = await present(file);
    if (size === undefined) return undefined;
    const now = new Date();
    await utimes(file, now, now).catch(() => undefined); // LRU: mark as used
    return { file, size, downloaded: false };
  };
  const cached = await hit();
  if (cached) return cached;

  const release = await acquireLock(
    `${file}.lock`,
    async () => (await present(file)) !== undefined,
    req.signal,
    () => req.onLog?.(`another tsbm run is downloading ${file}; waiting for it`),
  );
  if (!release)
    return (
      (await hit()) ?? Promise.reject(new ImageCacheError(`${file} vanished after another run downloaded it`))
    );
  try {
    const again = await hit();
    if (again) return again;
    const part = `${file}.part`;
    let got: { hash: string; size: number };
    try {
      got = await downloadWithResume(req.url, part, {
        algo: req.algo,
        tlsVerify: req.tlsVerify ?? true,
        retries: req.retries ?? 3,
        ...(req.downloadMaxBytes !== undefined ? { maxBytes: req.downloadMaxBytes } : {}),
        ...(req.idleMs !== undefined ? { idleMs: req.idleMs } : {}),
        ...(req.timeoutMs !== undefined ? { timeoutMs: req.timeoutMs } : {}),
        ...(req.signal ? { signal: req.signal } : {}),
        ...(req.onProgress ? { onProgress: req.onProgress } : {}),
        ...(req.onLog ? { onRetry: req.onLog } : {}),
      });
    } catch (e) {
      throw new ImageCacheError(`downloading the image into the cache failed: ${(e as Error).message}`, {
        cause: e,
      });
    }
    if (got.hash !== req.hash.toLowerCase()) {
      await unlink(part).catch(() => undefined);
      throw new ImageCacheError(
        `${req.algo} of the downloaded image is ${got.hash} but image_os_hash_value is ${req.hash.toLowerCase()}; nothing was cached`,
      );
    }
    await rename(part, file);
    if (req.maxBytes !== undefined) {
      const gone = await evict(dir, req.maxBytes, pinned);
      for (const g of gone) req.onLog?.(`evicted ${g} from the image cache`);
    }
    return { file, size: got.size, downloaded: true };
  } finally {
    await release();
  }
}

;
