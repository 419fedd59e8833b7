// Conversion to raw on the controller (Ironic's force_raw_images): a cached image that is not
// raw is converted once with `qemu-img convert`, next to the source in the cache, and the raw
// file's SHA-256 is computed from its bytes and recorded beside it (`<raw>.sha256`). The source
// checksum (md5 included) was verified against the download before this runs; after it, only
// the new SHA-256 is used, and every ramdisk verifies it on the stream it writes. Before
// qemu-img sees it, the image inspector (src/images/inspect/) reads its header, then qemu-img
// info (told the format, under resource limits) takes a second look: an image that names another
// file, is not the format declared, or would become more than tsbm_max_image_virtual or the
// cache's free space is refused, and nothing is converted.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, rename, stat, statfs, unlink, utimes, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { findProgram } from '../util/find-program.js';
import { DEFAULT_LIMITS, fmtLimit } from '../util/limits.js';
import { ImageCacheError } from './cache.js';
import { ImageRefused } from './inspect/refused.js';
import { inspectFile } from './inspect/local-file.js';
import { checkQemuInfo } from './inspect/qemu-info.js';
import { convertPercent, qemuImgConvertArgv, qemuImgInfoArgv } from './inspect/qemu-img.js';
import type { WritableFormat } from './inspect/types.js';
import { judgeImage } from './inspect/verdict.js';
import { acquireLock } from './lock.js';

export interface RawRequest {
  /** The verified source in the cache. */
  source: string;
  /** The format the inspector found and the operator declared, if they did (qemu-img is told, never left to guess). */
  format: WritableFormat;
  /** How messages name the image (its URL, credentials masked); default: the cache file's name. */
  name?: string;
  /** The largest virtual size accepted (tsbm_max_image_virtual); default: its default. */
  maxVirtualBytes?: number;
  /** CPU seconds qemu-img convert may use (its resource limit); default: an hour. */
  timeoutMs?: number;
  signal?: AbortSignal;
  onLog?: (message: string) => void;
  onProgress?: (percent: number) => void;
}

export interface RawImage {
  file: string;
  sha256: string;
  size: number;
  /** True when this call converted it (false: converted earlier, by this run or another). */
  converted: boolean;
}

/** What to tell an operator whose controller lacks qemu-img; undefined when it is there. */
export function qemuImgMissing(): string | undefined {
  if (findProgram('qemu-img')) return undefined;
  return 'qemu-img is not installed on the controller; it converts non-raw images to raw there (force_raw_images). Install it (Debian/Ubuntu: apt-get install qemu-utils; Fedora/RHEL: dnf install qemu-img), or set force_raw_images: false to convert on each ramdisk instead';
}

/** The raw file made from a cached source: beside it, named after it. */
export function rawFileFor(source: string): string {
  return join(dirname(source), `raw-of-${basename(source)}`);
}

function run(argv: readonly string[], signal: AbortSignal | undefined, onStdout?: (s: string) => void): Promise<{ rc: number; stdout: string; stderr: string }> {
  return new Promise((ok, fail) => {
    const child = execFile(argv[0] as string, argv.slice(1), { maxBuffer: 16 * 1024 * 1024, ...(signal ? { signal } : {}) }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ABORT_ERR') return fail(err);
      const rc = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      ok({ rc, stdout: String(stdout), stderr: String(stderr) });
    });
    if (onStdout) child.stdout?.on('data', (c: Buffer) => onStdout(c.toString('utf8')));
  });
}

async function sha256Of(file: string, signal?: AbortSignal): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file, signal ? { signal } : {})) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** The recorded checksum of a converted raw file, when the file is there and matches its record's size. */
async function recorded(file: string): Promise<RawImage | undefined> {
  const st = await stat(file).catch(() => undefined);
  if (!st?.isFile()) return undefined;
  const line = await readFile(`${file}.sha256`, 'utf8').catch(() => '');
  const m = /^([0-9a-f]{64}) {2}(\S+) (\d+)\n?$/.exec(line);
  if (!m || m[2] !== basename(file) || Number(m[3]) !== st.size) return undefined;
  const now = new Date();
  await utimes(file, now, now).catch(() => undefined); // LRU: in use
  return { file, sha256: m[1]!, size: st.size, converted: false };
}

/** The raw image converted earlier from this source, if the cache still holds it with its record. */
export function recordedRaw(source: string): Promise<RawImage | undefined> {
  return recorded(rawFileFor(source));
}

const inflight = new Map<string, Promise<RawImage>>();

export function convertedRaw(req: RawRequest): Promise<RawImage> {
  const file = rawFileFor(req.source);
  let p = inflight.get(file);
  if (!p) {
    p = convertOnce(req, file).finally(() => inflight.delete(file));
    inflight.set(file, p);
    return p;
  }
  return p.then((r) => ({ ...r, converted: false }));
}

async function convertOnce(req: RawRequest, file: string): Promise<RawImage> {
  const hit = await recorded(file);
  if (hit) return hit;
  if (!findProgram('qemu-img')) throw new ImageCacheError(qemuImgMissing() ?? 'qemu-img is missing');
  const release = await acquireLock(`${file}.lock`, async () => (await recorded(file)) !== undefined, req.signal, () =>
    req.onLog?.(`another tsbm run is converting ${req.source}; waiting for it`),
  );
  if (!release) {
    const done = await recorded(file);
    if (done) return done;
    throw new ImageCacheError(`${file} vanished after another run converted it`);
  }
  const part = `${file}.part`;
  try {
    const again = await recorded(file);
    if (again) return again;
    const virtualSize = await checkedVirtualSize(req, dirname(file));
    await unlink(part).catch(() => undefined);
    req.onLog?.(`converting ${basename(req.source)} (${req.format}) to raw on the controller`);
    const out = await run(
      qemuImgConvertArgv({ format: req.format, target: 'raw', source: req.source, dest: part, existingTarget: false, timeoutMs: req.timeoutMs ?? 3600_000 }),
      req.signal,
      (s) => {
        const p = convertPercent(s);
        if (p !== undefined) req.onProgress?.(p);
      },
    );
    if (out.rc !== 0) {
      throw new ImageCacheError(`qemu-img convert failed (rc ${out.rc}): ${out.stderr.trim().split('\n').slice(-2).join(' | ')}`);
    }
    // A raw conversion is exactly the virtual size checked above; anything else is not trusted.
    const written = (await stat(part)).size;
    if (written !== virtualSize) throw new ImageCacheError(`qemu-img convert wrote ${written} bytes, not the ${virtualSize} bytes the image declares; nothing is served`);
    const sha256 = await sha256Of(part, req.signal);
    const size = written;
    await rename(part, file);
    // Written last: a raw file without its record is converted again, never trusted.
    await writeFile(`${file}.sha256`, `${sha256}  ${basename(file)} ${size}\n`, { mode: 0o600 });
    return { file, sha256, size, converted: true };
  } finally {
    await unlink(part).catch(() => undefined);
    await release();
  }
}

/**
 * The inspector, then qemu-img info (limited, told the format) on the cached source: the image
 * is the format declared, names no other file, and its raw form fits both the bound
 * (tsbm_max_image_virtual) and the cache's free space. Returns the virtual size.
 */
async function checkedVirtualSize(req: RawRequest, dir: string): Promise<number> {
  const name = req.name ?? basename(req.source);
  const max = req.maxVirtualBytes ?? DEFAULT_LIMITS.imageVirtualBytes;
  const verdict = judgeImage(await inspectFile(req.source), { name, declared: req.format, maxVirtualBytes: max });
  if (!verdict.ok) throw new ImageRefused(`${verdict.message}; nothing was converted`, verdict.hint);
  const info = await run(qemuImgInfoArgv(req.format, req.source), req.signal);
  const checked = info.rc === 0 ? checkQemuInfo(info.stdout, req.format) : { problems: [`qemu-img info failed: ${info.stderr.trim().split('\n').at(-1) ?? `rc ${info.rc}`}`] };
  if (checked.problems.length || checked.virtualSize === undefined) {
    throw new ImageRefused(`${name} is refused: ${checked.problems.join('; ')}; nothing was converted`, 'publish a self-contained image in the format declared');
  }
  const size = checked.virtualSize;
  if (size > max) throw new ImageRefused(`${name} is refused: its virtual size ${fmtLimit(size)} is over tsbm_max_image_virtual (${fmtLimit(max)}); nothing was converted`, 'if the image is genuine, raise tsbm_max_image_virtual');
  const fs = await statfs(dir);
  const free = fs.bavail * fs.bsize;
  if (size > free) {
    throw new ImageRefused(
      `${name} is refused: its raw form is ${fmtLimit(size)} and the image cache (${dir}) has ${fmtLimit(free)} free; nothing was converted`,
      'free space there, point image_cache_dir at a larger file system, or set force_raw_images: false to convert on each ramdisk',
    );
  }
  return size;
}
