// convertedRaw with the real qemu-img: the raw image and its recorded SHA-256, one conversion
// for concurrent callers, images naming other files of the controller refused, and the message
// a controller without qemu-img gets.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ImageRefused } from '../../src/images/inspect/refused.js';
import { convertedRaw, qemuImgMissing, rawFileFor, recordedRaw } from '../../src/images/raw-convert.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();
const sha = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');

function qcow2From(dir: string, name: string, content: Buffer): string {
  const raw = path.join(dir, `${name}.raw`);
  writeFileSync(raw, content);
  const q = path.join(dir, `${name}.img`);
  execFileSync('qemu-img', ['convert', '-f', 'raw', '-O', 'qcow2', raw, q]);
  return q;
}

describe('convertedRaw', () => {
  const savedPath = process.env.PATH;
  afterEach(() => {
    process.env.PATH = savedPath;
  });

  it('converts once for concurrent callers and records the SHA-256 of the raw bytes beside it', async () => {
    const dir = scratch('tsbm-raw-');
    const content = Buffer.alloc(4 * 1024 * 1024, 7);
    const q = qcow2From(dir, 'sha256-abc', content);
    const [a, b] = await Promise.all([convertedRaw({ source: q, format: 'qcow2' }), convertedRaw({ source: q, format: 'qcow2' })]);
    expect([a.converted, b.converted].sort()).toEqual([false, true]);
    expect(a.file).toBe(rawFileFor(q));
    expect(a.sha256).toBe(createHash('sha256').update(content).digest('hex'));
    expect(sha(a.file)).toBe(a.sha256);
    expect(readFileSync(`${a.file}.sha256`, 'utf8')).toBe(`${a.sha256}  ${path.basename(a.file)} ${content.length}\n`);
    // A later call finds the record and converts nothing.
    const c = await convertedRaw({ source: q, format: 'qcow2' });
    expect(c.converted).toBe(false);
    expect((await recordedRaw(q))?.sha256).toBe(a.sha256);
  });

  it('a raw file whose record is missing or does not match its size is converted again, never trusted', async () => {
    const dir = scratch('tsbm-raw-');
    const q = qcow2From(dir, 'sha256-def', Buffer.alloc(1024 * 1024, 3));
    const first = await convertedRaw({ source: q, format: 'qcow2' });
    writeFileSync(first.file, Buffer.alloc(10, 1)); // changed size: the record no longer fits
    expect(await recordedRaw(q)).toBeUndefined();
    const again = await convertedRaw({ source: q, format: 'qcow2' });
    expect(again.converted).toBe(true);
    expect(again.sha256).toBe(first.sha256);
  });

  it('refuses a qcow2 that names a backing file (it would read the controller’s files)', async () => {
    const dir = scratch('tsbm-raw-');
    const secretFile = path.join(dir, 'controller-secret.raw');
    writeFileSync(secretFile, Buffer.alloc(1024 * 1024, 0x41));
    const q = path.join(dir, 'sha256-evil.img');
    execFileSync('qemu-img', ['create', '-f', 'qcow2', '-b', secretFile, '-F', 'raw', q], { stdio: 'ignore' });
    await expect(convertedRaw({ source: q, format: 'qcow2' })).rejects.toThrow(/names a backing file .*controller-secret\.raw.*nothing was converted/);
    expect(await recordedRaw(q)).toBeUndefined();
  });

  it('refuses an image that is not the declared format', async () => {
    const dir = scratch('tsbm-raw-');
    const f = path.join(dir, 'sha256-raw.img');
    writeFileSync(f, Buffer.alloc(65536, 1));
    await expect(convertedRaw({ source: f, format: 'qcow2' })).rejects.toBeInstanceOf(ImageRefused);
  });

  it('a controller without qemu-img is told which package to install', async () => {
    expect(qemuImgMissing()).toBeUndefined();
    process.env.PATH = scratch('tsbm-empty-path-');
    expect(qemuImgMissing()).toMatch(/qemu-img is not installed on the controller.*apt-get install qemu-utils.*force_raw_images: false/);
    const dir = scratch('tsbm-raw-');
    const f = path.join(dir, 'sha256-x.img');
    writeFileSync(f, 'x');
    await expect(convertedRaw({ source: f, format: 'qcow2' })).rejects.toThrow(/qemu-utils/);
  });
});
