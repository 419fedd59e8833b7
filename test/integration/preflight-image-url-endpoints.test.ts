// The preflight checks an image URL from the controller, which often cannot reach the address
// the nodes use (a provisioning network; a VM's guest-side 10.0.2.2). image_url_endpoints points
// the check at the address the controller reaches, as registry_endpoints does for registries:
// the request goes there and still names the URL's own host. Here the nodes' address is
// 127.77.0.2 (nothing listens there: refused), the controller's 127.0.0.1.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PreflightPlan, runPreflight } from '../../src/modules/preflight/preflight.js';
import { CheckClient } from '../../src/http/check-client.js';

let server: Server;
let port: number;
const seen: { path: string; host: string | undefined }[] = [];
const http = new CheckClient();

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    seen.push({ path: req.url ?? '', host: req.headers.host });
    if (req.url === '/images/disk.raw') {
      res.writeHead(206, { 'Content-Range': 'bytes 0-0/1048576', 'Content-Length': '1' }).end('x');
    } else res.writeHead(404).end();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  http.close();
  await new Promise((r) => server.close(r));
});

function plan(imageUrlEndpoints?: unknown): PreflightPlan {
  return {
    kind: 'image',
    image: `http://127.77.0.2:${port}/images/disk.raw`,
    iso: undefined,
    isoName: 'ramdisk_iso',
    pullSecret: undefined,
    tlsVerify: true,
    insecureRegistries: [],
    registryEndpoints: undefined,
    ...(imageUrlEndpoints !== undefined ? { imageUrlEndpoints } : {}),
    hash: { algo: 'sha256', value: 'a'.repeat(64), format: 'raw', allowMd5: false },
    skip: new Set(['bmc', 'iso']),
    baseDir: process.cwd(),
    timeoutMs: 5000,
  };
}

const services = () => {
  const cache = new Map<string, Promise<unknown>>();
  return {
    bmc: () => Promise.resolve('not asked'),
    http,
    once: <T>(key: string, check: () => Promise<T>) => {
      if (!cache.has(key)) cache.set(key, check());
      return cache.get(key) as Promise<T>;
    },
    secret: () => {},
    signal: new AbortController().signal,
  };
};

describe('image_url_endpoints', () => {
  it('without it, an address only the nodes reach fails the check, and the fix names image_url_endpoints', async () => {
    const r = await runPreflight(plan(), services());
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toMatchObject({ check: 'image_url' });
    expect(r.problems[0]!.message).toMatch(/image http:\/\/127\.77\.0\.2:\d+\/images\/disk\.raw does not answer from the controller/);
    expect(r.problems[0]!.fix).toMatch(/map it with image_url_endpoints/);
  });

  it("with it, the check goes to the controller's address and names the URL's host; the image answers", async () => {
    seen.length = 0;
    const r = await runPreflight(plan({ [`127.77.0.2:${port}`]: `http://127.0.0.1:${port}` }), services());
    expect(r.problems).toEqual([]);
    expect(r.passed.join('; ')).toMatch(/image http:\/\/127\.77\.0\.2:\d+\/images\/disk\.raw answers \(1048576 bytes\), sha256 checksum given/);
    expect(seen).toEqual([{ path: '/images/disk.raw', host: `127.77.0.2:${port}` }]);
  });

  it('a malformed map is a problem naming the variable, not a crash', async () => {
    const r = await runPreflight(plan({ 'a/b': 'http://127.0.0.1:1' }), services());
    expect(r.problems[0]).toMatchObject({ check: 'image_url' });
    expect(r.problems[0]!.message).toMatch(/image_url_endpoints key "a\/b" is not a host\[:port\]/);
  });
});
