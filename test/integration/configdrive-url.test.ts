// The URL form of instance_info.configdrive, downloaded from a real HTTP server on loopback.
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIso } from '../../src/configdrive/iso9660.js';
import { resolveConfigDrive } from '../../src/configdrive/source.js';

const iso = buildIso([{ path: 'openstack/latest/meta_data.json', data: Buffer.from('{"uuid":"u"}') }], {
  volumeId: 'config-2',
});
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/raw.iso') res.end(iso);
    else if (req.url === '/cd.gz.b64') res.end(gzipSync(iso).toString('base64'));
    else {
      res.statusCode = 404;
      res.end('nope');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const node = { name: 'n', uuid: 'u' };
describe('configdrive from an http URL', () => {
  it('a raw ISO body', async () => {
    const r = await resolveConfigDrive(`${base}/raw.iso`, node);
    expect(r.source).toBe('url');
    expect(r.iso.equals(iso)).toBe(true);
  });
  it('a gzip+base64 body', async () => {
    expect((await resolveConfigDrive(`${base}/cd.gz.b64`, node)).iso.equals(iso)).toBe(true);
  });
  it('HTTP 404 is a clear error', async () => {
    await expect(resolveConfigDrive(`${base}/missing`, node)).rejects.toThrow(/HTTP 404/);
  });
  it('an unreachable URL is a clear error', async () => {
    await expect(resolveConfigDrive('http://127.0.0.1:1/x', node)).rejects.toThrow(/cannot download/);
  });
});
