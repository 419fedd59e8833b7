// The file server's URLs cannot be computed from outside (a random token per run, not a hash of
// the file's path, size and time), and a published file is pinned: a symlink re-pointed after
// publishing, or a file replaced under the same name, is refused rather than served.
import { createHash } from 'node:crypto';
import { renameSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FileServer, startFileServer } from '../../src/http/file-server.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();
const servers: FileServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function server(): Promise<FileServer> {
  const s = await startFileServer();
  servers.push(s);
  return s;
}

function get(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => {
        body += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('file server URL tokens', () => {
  it('are random per run: another server (run) gives the same file another token, not one computable from the file', async () => {
    const dir = scratch('tsbm-fs-');
    const file = join(dir, 'ramdisk.iso');
    writeFileSync(file, 'iso bytes');
    const a = await server();
    const b = await server();
    const ua = await a.publish(file);
    const ub = await b.publish(file);
    const token = (u: string) => /\/files\/([0-9a-f]+)\//.exec(u)?.[1];
    expect(token(ua)).toMatch(/^[0-9a-f]{32}$/);
    expect(token(ua)).not.toBe(token(ub));
    // The old keyless hash of path, size and mtime would have let anyone who knows the file
    // compute the URL; the token is not it.
    const st = statSync(file);
    const keyless = createHash('sha256').update(`${file}\0${st.size}\0${st.mtimeMs}`).digest('hex');
    expect(keyless.startsWith(token(ua) ?? '')).toBe(false);
    expect(keyless.slice(0, 24)).not.toBe(token(ua)?.slice(0, 24));
    // Within one run the same unchanged file keeps its URL (a re-insert finds it inserted).
    expect(await a.publish(file)).toBe(ua);
  });
});

describe('published files are pinned', () => {
  it('a symlink re-pointed after publishing is refused; the new target is never served', async () => {
    const dir = scratch('tsbm-fs-');
    writeFileSync(join(dir, 'good.iso'), 'the ramdisk');
    writeFileSync(join(dir, 'secret'), 'the controller private key');
    const link = join(dir, 'current.iso');
    symlinkSync(join(dir, 'good.iso'), link);
    const s = await server();
    const url = await s.publish(link);
    expect(await get(url)).toEqual({ status: 200, body: 'the ramdisk' });
    unlinkSync(link);
    symlinkSync(join(dir, 'secret'), link);
    const after = await get(url);
    expect(after.status).toBe(404);
    expect(after.body).not.toContain('private key');
  });

  it('a file replaced under the same name (another inode) is refused', async () => {
    const dir = scratch('tsbm-fs-');
    const file = join(dir, 'img.raw');
    writeFileSync(file, 'original');
    const s = await server();
    const url = await s.publish(file);
    writeFileSync(join(dir, 'other'), 'substitute');
    renameSync(join(dir, 'other'), file);
    expect((await get(url)).status).toBe(404);
    // Publishing again pins the file as it is now, under a new token.
    const again = await s.publish(file);
    expect(again).not.toBe(url);
    expect(await get(again)).toEqual({ status: 200, body: 'substitute' });
  });

  it('a published regular file swapped for a symlink is refused', async () => {
    const dir = scratch('tsbm-fs-');
    const file = join(dir, 'a.iso');
    writeFileSync(file, 'a');
    writeFileSync(join(dir, 'b'), 'b');
    const s = await server();
    const url = await s.publish(file);
    unlinkSync(file);
    symlinkSync(join(dir, 'b'), file);
    expect((await get(url)).status).toBe(404);
  });

  it('only regular files are published', async () => {
    const s = await server();
    await expect(s.publish(scratch('tsbm-fs-'))).rejects.toThrow(/is not a regular file/);
  });
});
