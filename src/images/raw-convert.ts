// Conversion to raw on the controller (Ironic's force_raw_images): a cached image that is not
// raw is converted once with `qemu-img convert`, next to the source in the cache, and the raw
// file's SHA-256 is computed from its bytes and recorded beside it (`<raw>.sha256`). The source
// checksum (md5 included) was verified against the download before this runs; after it, only
// the new SHA-256 is used, and every ramdisk verifies it on the stream it writes.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { findProgram } from '../util/find-program.js';
import { ImageCacheError } from './cache.js';
import { acquireLock } from './lock.js';

export interface RawRequest {
  /** The verified source in the cache. */
  source: string;
  /** The format the source was declared as (qemu-img is told, never left to guess). */
  format: string;
  signal?: AbortSignal;
  onLog?: (message: string) => void;
  onProgress?: (percent: number) => void;
  /** Where qemu-img is (tests); default: looked up on PATH. */
  qemuImg?: string;
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

function run(file: string, argv: string[], signal: AbortSignal | undefined, onStdout?: (s: string) => void): Promise<{ rc: number; stdout: string; stderr: string }> {
  return new Promise((ok, fail) => {
    const child = execFile(file, argv, { maxBuffer: 16 * 1024 * 1024, ...(signal ? { signal } : {}) }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ABORT_ERR') return fail(err);
      const rc = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      ok({ rc, stdout: String(stdout), stderr: String(stderr) });
    });
    if (onStdout) child.stdout?.on('data', (c: Buffer) => onStdout(c.toString('utf8')));
  });
}

/**
 * Refuses images that would make qemu-img read other files of the controller: a backing file
 * or an external data file named inside an image is the image author's choice, not ours.
 */
function unsafeImageReason(info: Record<string, unknown>): string | undefined {
  if (typeof info['backing-filename'] === 'string' || typeof info['full-backing-filename'] === 'string') {
    return `it names a backing file (${String(info['backing-filename'] ?? info['full-backing-filename'])})`;
  }
  const specific = info['format-specific'] as { data?: Record<string, unknown> } | undefined;
  const dataFile = specific?.data?.['data-file'];
  if (typeof dataFile === 'string' && dataFile !== '') return `it names an external data file (${dataFile})`;
  return undefined;
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
  const qemuImg = req.qemuImg ?? findProgram('qemu-img');
  if (!qemuImg) throw new ImageCacheError(qemuImgMissing() ?? 'qemu-img is missing');
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
    const info = await run(qemuImg, ['info', '--output=json', '-f', req.format, req.source], req.signal);
    let parsed: Record<string, unknown> = {};
    try {
      parsed = JSON.parse(info.stdout) as Record<string, unknown>;
    } catch {
      /* reported below */
    }
    if (info.rc !== 0 || parsed.format !== req.format) {
      throw new ImageCacheError(
        `the image is not ${req.format} (qemu-img info: ${info.stderr.trim().split('\n').at(-1) || String(parsed.format ?? 'no answer')}); nothing was converted`,
      );
    }
    const unsafe = unsafeImageReason(parsed);
    if (unsafe) throw new ImageCacheError(`the ${req.format} image is refused: ${unsafe}; nothing was converted`);
    await unlink(part).catch(() => undefined);
    req.onLog?.(`converting ${basename(req.source)} (${req.format}) to raw on the controller`);
    const out = await run(qemuImg, ['convert', '-p', '-f', req.format, '-O', 'raw', req.source, part], req.signal, (s) => {
      const m = /\((\d+(?:\.\d+)?)\/100%\)[^(]*$/.exec(s);
      if (m) req.onProgress?.(Number(m[1]));
    });
    if (out.rc !== 0) {
      throw new ImageCacheError(`qemu-img convert failed (rc ${out.rc}): ${out.stderr.trim().split('\n').slice(-2).join(' | ')}`);
    }
    const sha256 = await sha256Of(part, req.signal);
    const size = (await stat(part)).size;
    await rename(part, file);
    // Written last: a raw file without its record is converted again, never trusted.
    await writeFile(`${file}.sha256`, `${sha256}  ${basename(file)} ${size}\n`, { mode: 0o600 });
    return { file, sha256, size, converted: true };
  } finally {
    await unlink(part).catch(() => undefined);
    await release();
  }
}
