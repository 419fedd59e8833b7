// The controller-side image cache against a real HTTP server on 127.0.0.1: one download for
// concurrent requests, resume with Range after a dropped connection, nothing cached on a
// checksum mismatch, LRU eviction, and waiting on another run's lock file.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedImage, cacheFile, ImageCacheError } from '../../src/images/cache.js';
import {
  buildGptImage,
  type ImageServer,
  serveFiles,
  sha,
  type TestImage,
} from '../helpers/image-fixture.js';

let dir: string;
let img: TestImage;
let other: string;
let server: ImageServer;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tsbm-image-cache-'));
  img = buildGptImage(dir, 24);
  other = path.join(dir, 'other.raw');
  writeFileSync(other, Buffer.alloc(3 * 1024 * 1024, 7));
  server = await serveFiles([img.raw, other]);
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const req = (cache: string, extra: Partial<Parameters<typeof cachedImage>[0]> = {}) => ({
  url: `${server.url}/disk.raw`,
  algo: 'sha256' as const,
  hash: img.sha256,
  dir: cache,
  retries: 3,
  ...extra,
});

describe('image cache', () => {
  it('shares one download between concurrent requests, then hits', async () => {
    const cache = path.join(dir, 'c1');
    const before = server.downloads('disk.raw');
    const all = await Promise.all(Array.from({ length: 5 }, () => cachedImage(req(cache))));
    expect(server.downloads('disk.raw') - before).toBe(1);
    expect(new Set(all.map((r) => r.file)).size).toBe(1);
    expect(all.filter((r) => r.downloaded)).toHaveLength(1);
    expect(sha(all[0]!.file)).toBe(img.sha256);
    const again = await cachedImage(req(cache));
    expect(again.downloaded).toBe(false);
    expect(server.downloads('disk.raw') - before).toBe(1);
  });

  it('resumes with a Range request after the connection drops', async () => {
    const cache = path.join(dir, 'c2');
    server.dropAfter(3 * 1024 * 1024, 1);
    const logs: string[] = [];
    const r = await cachedImage(req(cache, { onLog: (m) => logs.push(m) }));
    expect(sha(r.file)).toBe(img.sha256);
    expect(server.log.some((l) => /GET \/disk\.raw [1-9]\d*- 206/.test(l))).toBe(true);
    expect(logs.join('\n')).toMatch(/resuming/);
  });

  it('caches nothing when the checksum does not match', async () => {
    const cache = path.join(dir, 'c3');
    await expect(cachedImage(req(cache, { hash: 'f'.repeat(64) }))).rejects.toThrow(ImageCacheError);
    await expect(cachedImage(req(cache, { hash: 'f'.repeat(64) }))).rejects.toThrow(
      /image_os_hash_value is f{64}/,
    );
    expect(readdirSync(cache).filter((f) => f.endsWith('.img') || f.endsWith('.part'))).toEqual([]);
  });

  it('evicts the least recently used image beyond the size bound, never the one just fetched', async () => {
    const cache = path.join(dir, 'c4');
    mkdirSync(cache, { recursive: true });
    const old = path.join(cache, `sha256-${'e'.repeat(64)}.img`);
    const older = path.join(cache, `sha256-${'d'.repeat(64)}.img`);
    await copyFile(other, old);
    await copyFile(other, older);
    utimesSync(older, new Date(1000), new Date(1000));
    utimesSync(old, new Date(2000), new Date(2000));
    // 3 x 3 MiB against a 7 MiB bound: only the least recently used one goes.
    const r = await cachedImage({
      url: `${server.url}/other.raw`,
      algo: 'sha256',
      hash: sha(other),
      dir: cache,
      maxBytes: 7 * 1024 * 1024,
    });
    expect(existsSync(r.file)).toBe(true);
    expect(existsSync(older)).toBe(false);
    expect(existsSync(old)).toBe(true);
    // A bound smaller than the image itself still keeps the image being deployed.
    const r2 = await cachedImage({
      url: `${server.url}/other.raw`,
      algo: 'sha512',
      hash: sha(other, 'sha512'),
      dir: cache,
      maxBytes: 1,
    });
    expect(existsSync(r2.file)).toBe(true);
    expect(existsSync(old)).toBe(false);
  });

  it("waits for another run's lock and uses its download", async () => {
    const cache = path.join(dir, 'c5');
    const file = cacheFile(cache, 'sha256', img.sha256);
    // A live process that is not us holds the lock, as a concurrent tsbm run would.
    const holder = spawn('sleep', ['30']);
    try {
      mkdirSync(cache, { recursive: true });
      writeFileSync(`${file}.lock`, String(holder.pid));
      const before = server.downloads('disk.raw');
      const waiting = cachedImage(req(cache));
      await new Promise((r) => setTimeout(r, 700));
      await copyFile(img.raw, file);
      const r = await waiting;
      expect(r.file).toBe(file);
      expect(r.downloaded).toBe(false);
      expect(server.downloads('disk.raw')).toBe(before);
    } finally {
      holder.kill();
    }
  });

  it('takes over a lock whose pid now belongs to a process started later (pid reuse)', async () => {
    const cache = path.join(dir, 'c6');
    const file = cacheFile(cache, 'sha256', img.sha256);
    const live = spawn('sleep', ['30']);
    try {
      mkdirSync(cache, { recursive: true });
      // The lock names a live pid, but with another start time: its owner died and the pid was reused.
      writeFileSync(`${file}.lock`, JSON.stringify({ runId: 'old', pid: live.pid, machine: hostname(), time: 0, started: '1' }));
      const before = server.downloads('disk.raw');
      const r = await cachedImage(req(cache));
      expect(r.downloaded).toBe(true);
      expect(server.downloads('disk.raw')).toBe(before + 1);
      expect(existsSync(`${file}.lock`)).toBe(false);
    } finally {
      live.kill();
    }
  });
});
