// The preflight's registry and URL checks against real HTTP servers on loopback: the
// simulated lab's registry (Bearer tokens, as quay.io or Harbor), a registry that asks for
// Basic credentials (as docker-registry with htpasswd does) or takes a refresh token, a TLS
// registry with a certificate the controller does not trust, and plain file servers.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckClient } from '../../src/http/check-client.js';
import { type ManifestQuery, resolveManifest } from '../../src/http/oci-manifest.js';
import { probeUrl } from '../../src/http/url-probe.js';
import { selfSignedCert } from '../../packages/lab/src/bmc/tls.js';
import { SIM_IMAGES, SIM_REGISTRY } from '../../packages/lab/src/lab/images.js';
import { SIM_ISO_PATH, type SimRegistry, startSimRegistry } from '../../packages/lab/src/lab/registry-server.js';

const AUTH = 'tsbm:lab-pull-pw';
const client = new CheckClient();
let sim: SimRegistry;

interface Seen {
  host?: string;
  authorization?: string;
  path: string;
  method: string;
  body?: string;
}

/** A minimal registry: Basic auth, or Bearer tokens from a refresh token (POST to /token). */
function registryHandler(mode: 'basic' | 'refresh', seen: Seen[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://x');
      seen.push({ host: req.headers.host, authorization: req.headers.authorization, path: u.pathname, method: req.method ?? '', body });
      const auth = req.headers.authorization ?? '';
      if (u.pathname === '/token' && req.method === 'POST') {
        const form = new URLSearchParams(body);
        if (form.get('grant_type') === 'refresh_token' && form.get('refresh_token') === 'good-refresh') {
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ access_token: 'tok-1' }));
        } else res.writeHead(401).end('{"errors":[{"code":"UNAUTHORIZED","message":"bad refresh token"}]}');
        return;
      }
      const ok = mode === 'basic' ? auth === `Basic ${Buffer.from('tester:s3cret').toString('base64')}` : auth === 'Bearer tok-1';
      if (!ok) {
        const challenge = mode === 'basic' ? 'Basic realm="tsbm-test"' : `Bearer realm="http://${req.headers.host}/token",service="test"`;
        res.writeHead(401, { 'WWW-Authenticate': challenge, 'Content-Type': 'application/json' });
        res.end('{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}');
        return;
      }
      if (u.pathname === '/v2/os/image/manifests/1.0') {
        res.writeHead(200, { 'Content-Type': 'application/vnd.oci.image.manifest.v1+json', 'Docker-Content-Digest': 'sha256:feed' });
        res.end('{"schemaVersion":2,"layers":[]}');
        return;
      }
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}');
    });
  };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  return (server.address() as AddressInfo).port;
}

const servers: Server[] = [];
const basicSeen: Seen[] = [];
const refreshSeen: Seen[] = [];
let basicPort = 0;
let refreshPort = 0;
let tlsPort = 0;
let filesPort = 0;
let closedPort = 0;

beforeAll(async () => {
  sim = await startSimRegistry({ registryHost: SIM_REGISTRY, images: SIM_IMAGES, auth: AUTH });
  const basic = createHttpServer(registryHandler('basic', basicSeen));
  const refresh = createHttpServer(registryHandler('refresh', refreshSeen));
  const cert = await selfSignedCert('127.0.0.1');
  const tls = createHttpsServer({ cert: cert.certPem, key: cert.keyPem }, registryHandler('basic', []));
  tls.on('tlsClientError', () => {});
  const files = createHttpServer((req, res) => {
    if (req.url === '/moved') res.writeHead(302, { Location: '/ramdisk.iso' }).end();
    else if (req.url === '/ramdisk.iso') {
      const ranged = req.headers.range === 'bytes=0-0';
      res.writeHead(ranged ? 206 : 200, ranged ? { 'Content-Range': 'bytes 0-0/4096', 'Content-Length': '1' } : { 'Content-Length': '4096' });
      res.end(ranged ? 'x' : Buffer.alloc(4096));
    } else if (req.url === '/secret.iso') res.writeHead(403).end();
    else res.writeHead(404).end();
  });
  servers.push(basic, refresh, tls, files);
  basicPort = await listen(basic);
  refreshPort = await listen(refresh);
  tlsPort = await listen(tls);
  filesPort = await listen(files);
  const closed = createHttpServer();
  closedPort = await listen(closed);
  await new Promise((r) => closed.close(r));
}, 30_000);

afterAll(async () => {
  await client.close();
  await sim?.close();
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

describe('registry manifests through the Bearer token dance (the lab registry)', () => {
  const [user, password] = AUTH.split(':') as [string, string];
  const q = (over: Partial<ManifestQuery>): ManifestQuery => ({
    registry: SIM_REGISTRY,
    repository: 'tsbm/bootc-demo',
    reference: 'latest',
    credentials: { username: user, password },
    endpointFor: (h) => (h === SIM_REGISTRY ? sim.url : undefined),
    insecure: false,
    ...over,
  });

  it('resolves with the pull secret: token from the realm, then the manifest, via registry_endpoints', async () => {
    const before = sim.requests.length;
    const a = await resolveManifest(client, q({}));
    expect(a).toMatchObject({ ok: true, mediaType: 'application/vnd.oci.image.manifest.v1+json' });
    if (!a.ok) throw new Error('unreachable');
    expect(a.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(sim.requests.slice(before)).toEqual([
      'GET /v2/tsbm/bootc-demo/manifests/latest',
      'GET /token',
      'GET /v2/tsbm/bootc-demo/manifests/latest',
    ]);
    // the same image by digest
    expect(await resolveManifest(client, q({ reference: a.digest! }))).toMatchObject({ ok: true, digest: a.digest });
  });

  it('names what is wrong: a misspelled repository, a missing tag, a wrong password, no pull secret', async () => {
    expect(await resolveManifest(client, q({ repository: 'tsbm/bootc-dmeo' }))).toMatchObject({ ok: false, why: 'name_unknown', status: 404 });
    expect(await resolveManifest(client, q({ reference: '42' }))).toMatchObject({ ok: false, why: 'manifest_unknown', status: 404 });
    const wrong = await resolveManifest(client, q({ credentials: { username: user, password: 'nope' } }));
    expect(wrong).toMatchObject({ ok: false, why: 'unauthorized', status: 401 });
    expect(JSON.stringify(wrong)).not.toContain(password);
    const anon = await resolveManifest(client, q({ credentials: undefined }));
    expect(anon).toMatchObject({ ok: false, why: 'unauthorized' });
    if (!anon.ok) expect(anon.message).toMatch(/no credentials sent/);
  });

  it('without registry_endpoints the name does not resolve: unreachable, not a crash', async () => {
    const a = await resolveManifest(client, q({ endpointFor: () => undefined, timeoutMs: 5000 }));
    expect(a).toMatchObject({ ok: false, why: 'unreachable' });
  });
});

describe('registries with Basic auth, refresh tokens, plain HTTP and untrusted TLS', () => {
  it('Basic: the credentials go with the retry; Host names the registry the image names', async () => {
    basicSeen.length = 0;
    const a = await resolveManifest(client, {
      registry: 'registry.example:5000',
      repository: 'os/image',
      reference: '1.0',
      credentials: { username: 'tester', password: 's3cret' },
      endpointFor: (h) => (h === 'registry.example:5000' ? `http://127.0.0.1:${basicPort}` : undefined),
      insecure: false,
    });
    expect(a).toMatchObject({ ok: true, digest: 'sha256:feed' });
    expect(basicSeen.map((s) => [s.host, s.authorization?.split(' ')[0] ?? 'none'])).toEqual([
      ['registry.example:5000', 'none'],
      ['registry.example:5000', 'Basic'],
    ]);
    const bad = await resolveManifest(client, {
      registry: 'registry.example:5000',
      repository: 'os/image',
      reference: '1.0',
      credentials: { username: 'tester', password: 'wrong' },
      endpointFor: () => `http://127.0.0.1:${basicPort}`,
      insecure: false,
    });
    expect(bad).toMatchObject({ ok: false, why: 'unauthorized', status: 401 });
  });

  it('an identitytoken is exchanged at the realm (POST, grant_type=refresh_token)', async () => {
    refreshSeen.length = 0;
    const base = { registry: `127.0.0.1:${refreshPort}`, repository: 'os/image', reference: '1.0', insecure: true } as const;
    expect(await resolveManifest(client, { ...base, credentials: { identityToken: 'good-refresh' } })).toMatchObject({ ok: true });
    const post = refreshSeen.find((s) => s.method === 'POST');
    expect(new URLSearchParams(post?.body).get('scope')).toBe('repository:os/image:pull');
    expect(await resolveManifest(client, { ...base, credentials: { identityToken: 'stale' } })).toMatchObject({ ok: false, why: 'unauthorized' });
  });

  it('plain HTTP only for a registry marked insecure: otherwise the HTTPS attempt is reported', async () => {
    const base = {
      registry: `127.0.0.1:${basicPort}`,
      repository: 'os/image',
      reference: '1.0',
      credentials: { username: 'tester', password: 's3cret' },
    };
    basicSeen.length = 0;
    const strict = await resolveManifest(client, { ...base, insecure: false });
    expect(strict).toMatchObject({ ok: false, why: 'plain_http' });
    expect(basicSeen).toEqual([]); // no HTTP request reached the server
    const insecure = await resolveManifest(client, { ...base, insecure: true });
    expect(insecure).toMatchObject({ ok: true, url: `http://127.0.0.1:${basicPort}/v2/os/image/manifests/1.0` });
  });

  it('HTTPS with a certificate the controller does not trust: refused unless insecure', async () => {
    const base = {
      registry: `127.0.0.1:${tlsPort}`,
      repository: 'os/image',
      reference: '1.0',
      credentials: { username: 'tester', password: 's3cret' },
    };
    const strict = await resolveManifest(client, { ...base, insecure: false });
    expect(strict).toMatchObject({ ok: false, why: 'tls' });
    expect(await resolveManifest(client, { ...base, insecure: true })).toMatchObject({ ok: true, url: `https://127.0.0.1:${tlsPort}/v2/os/image/manifests/1.0` });
  });

  it('nobody listening: unreachable', async () => {
    const a = await resolveManifest(client, { registry: `127.0.0.1:${closedPort}`, repository: 'a', reference: 'b', insecure: true });
    expect(a).toMatchObject({ ok: false, why: 'unreachable' });
  });
});

describe('URL probes (ISO, image URL)', () => {
  it('answers with the size, follows redirects, tells not found from denied from unreachable', async () => {
    const f = `http://127.0.0.1:${filesPort}`;
    expect(await probeUrl(client, `${f}/ramdisk.iso`)).toEqual({ ok: true, status: 206, size: 4096 });
    expect(await probeUrl(client, `${f}/moved`)).toEqual({ ok: true, status: 206, size: 4096 });
    expect(await probeUrl(client, `${f}/nothing.iso`)).toMatchObject({ ok: false, why: 'not_found', status: 404 });
    expect(await probeUrl(client, `${f}/secret.iso`)).toMatchObject({ ok: false, why: 'denied', status: 403 });
    expect(await probeUrl(client, `http://127.0.0.1:${closedPort}/x.iso`)).toMatchObject({ ok: false, why: 'unreachable' });
    expect(await probeUrl(client, `${sim.url}${SIM_ISO_PATH}`)).toEqual({ ok: true, status: 206, size: 65536 });
  });

  it('a TLS server with an untrusted certificate fails verification, and answers without it', async () => {
    const u = `https://127.0.0.1:${tlsPort}/v2/`;
    expect(await probeUrl(client, u)).toMatchObject({ ok: false, why: 'tls' });
    // 401 from the registry: it answered.
    expect(await probeUrl(client, u, { tlsVerify: false })).toMatchObject({ ok: false, why: 'denied', status: 401 });
  });
});
