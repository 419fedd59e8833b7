// The built-in HTTP file server (ranges, HEAD, unknown paths) and vmedia_boot serving a local
// ISO through it, with the fake BMC's boot hook seeing the node boot from that media.
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FileServer, startFileServer } from '../../src/http/file-server.js';
import { redfishPowerModule } from '../../src/modules/redfish/redfish_power.js';
import { vmediaBootModule } from '../../src/modules/redfish/vmedia_boot.js';
import type { BootInfo } from '../../packages/lab/src/bmc/state.js';
import { startFakeBmc } from '../../packages/lab/src/bmc/server.js';
import { driverInfo, MOCKUPS, makeCtx } from './redfish-helpers.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();

function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const dir = scratch('tsbm-http-');
const iso = join(dir, 'ramdisk.iso');
const content = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));

describe('file server', () => {
  let server: FileServer;
  let url: string;
  beforeAll(async () => {
    writeFileSync(iso, content);
    server = await startFileServer();
    url = await server.publish(iso);
  });
  afterAll(() => server.close());

  it('serves the whole file with its length, and the same URL for the same file', async () => {
    const r = await get(url);
    expect(r.status).toBe(200);
    expect(r.headers['content-length']).toBe('5000');
    expect(r.headers['accept-ranges']).toBe('bytes');
    expect(r.body.equals(content)).toBe(true);
    expect(await server.publish(iso)).toBe(url);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\/[0-9a-f]{32}\/ramdisk\.iso$/);
  });

  it('answers byte ranges with 206 and Content-Range', async () => {
    const r = await get(url, { Range: 'bytes=100-199' });
    expect(r.status).toBe(206);
    expect(r.headers['content-range']).toBe('bytes 100-199/5000');
    expect(r.body.equals(content.subarray(100, 200))).toBe(true);
    const tail = await get(url, { Range: 'bytes=-10' });
    expect(tail.body.equals(content.subarray(4990))).toBe(true);
    const open = await get(url, { Range: 'bytes=4990-' });
    expect(open.headers['content-range']).toBe('bytes 4990-4999/5000');
  });

  it('refuses an unsatisfiable range with 416', async () => {
    const r = await get(url, { Range: 'bytes=6000-7000' });
    expect(r.status).toBe(416);
    expect(r.headers['content-range']).toBe('bytes */5000');
  });

  it('HEAD gives the headers without a body', async () => {
    const r = await get(url, {}, 'HEAD');
    expect(r.status).toBe(200);
    expect(r.headers['content-length']).toBe('5000');
    expect(r.body.length).toBe(0);
  });

  it('unpublished paths are 404 and other methods 405', async () => {
    expect((await get(url.replace(/files\/[0-9a-f]+/, 'files/0000'))).status).toBe(404);
    expect((await get(url, {}, 'DELETE')).status).toBe(405);
  });
});

describe('vmedia_boot with a local ISO', () => {
  it('serves the ISO, the BMC gets its URL, and the node boots from it once', async () => {
    const boots: BootInfo[] = [];
    const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, password: 'pw-123', hooks: { onBoot: (b) => boots.push(b) } });
    const t = makeCtx({ driver_info: driverInfo(bmc, { redfish_password: 'pw-123', redfish_verify_ca: false }), tsbm_http_address: '127.0.0.1' });
    try {
      await redfishPowerModule.run(t.ctx, { state: 'off' });
      const r = await vmediaBootModule.run(t.ctx, { image: iso });
      const served = r.image_url as string;
      expect(served).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\/.*\/ramdisk\.iso$/);
      expect((await get(served)).body.equals(content)).toBe(true); // what the BMC would fetch
      await redfishPowerModule.run(t.ctx, { state: 'on' });
      expect(boots).toEqual([{ bootSourceOverrideTarget: 'Cd', bootSourceOverrideEnabled: 'Once', mediaInserted: true, image: served, otherMedia: [] }]);
      expect(bmc.state.boot.BootSourceOverrideEnabled).toBe('Disabled'); // Once is consumed by that boot
      await t.close();
      await expect(get(served)).rejects.toThrow(); // the server lives only as long as the run
    } finally {
      await t.close();
      await bmc.close();
    }
  });

  it('a missing local file is a clear error', async () => {
    const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, password: 'pw-123' });
    const t = makeCtx({ driver_info: driverInfo(bmc, { redfish_password: 'pw-123', redfish_verify_ca: false }) });
    try {
      await expect(vmediaBootModule.run(t.ctx, { image: 'missing/ramdisk.iso' })).rejects.toThrow(/neither an http\(s\) URL nor a readable local file/);
    } finally {
      await t.close();
      await bmc.close();
    }
  });
});
