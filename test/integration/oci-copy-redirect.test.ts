// The image mirror's fill (src/images/oci-copy.ts) through blob redirects, as registries that keep
// their blobs on a CDN or object store answer: an in-process registry on loopback (Basic auth)
// answers each blob GET with a redirect to another loopback server holding the bytes. The fill
// follows it without the registry's credentials and the mirror (a real docker-registry) checks
// every blob against its digest; a redirect the download policy refuses (another scheme, https
// down to http, a loop) fails the fill saying which registry and which blob.
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OciMirror, startOciMirror } from '../../src/images/oci-mirror.js';
import { selfSignedCert } from '../../packages/lab/src/bmc/tls.js';
import { haveTool } from '../e2e/lab/run.js';
import { OCI_MANIFEST, type OciTestImage, ociImage, sha } from '../helpers/oci-image.js';

const USER = 'puller';
const PASSWORD = 'redir3ct-pull-pw';
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

interface Seen {
  path: string;
  authorization: string | undefined;
}

/** What a blob GET of the registry answers: the redirect's Location, given the digest. */
type Redirect = (digest: string) => string;

interface FakeRegistry {
  url: string;
  /** host:port, as an image would name it. */
  name: string;
  seen: Seen[];
  images: Map<string, OciTestImage>;
  redirect: Map<string, Redirect>;
  server: Server;
}

function listen(server: Server): Promise<number> {
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok((server.address() as AddressInfo).port)));
}

function close(server: Server | undefined): Promise<void> {
  if (!server) return Promise.resolve();
  server.closeAllConnections();
  return new Promise((ok) => server.close(() => ok()));
}

/** A registry's API on loopback: Basic auth, manifests by tag, every blob GET redirected (per repository). */
async function startRegistry(tls: boolean): Promise<FakeRegistry> {
  const images = new Map<string, OciTestImage>();
  const redirect = new Map<string, Redirect>();
  const seen: Seen[] = [];
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    seen.push({ path, authorization: req.headers.authorization });
    if (req.headers.authorization !== BASIC) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="fake registry"' }).end();
      return;
    }
    const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(path);
    const img = m ? images.get(m[1]!) : undefined;
    if (!m || !img) {
      res.writeHead(path === '/v2/' ? 200 : 404).end('{}');
      return;
    }
    if (m[2] === 'manifests') {
      res.writeHead(200, { 'Content-Type': OCI_MANIFEST, 'Content-Length': img.manifest.length }).end(img.manifest);
      return;
    }
    const to = redirect.get(m[1]!);
    res.writeHead(to ? 307 : 404, to ? { Location: to(m[3]!) } : {}).end();
  };
  let server: Server;
  if (tls) {
    const cert = await selfSignedCert('127.0.0.1');
    server = createHttps({ cert: cert.certPem, key: cert.keyPem }, handle) as unknown as Server;
  } else {
    server = createHttp(handle);
  }
  const port = await listen(server);
  return { url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`, name: `127.0.0.1:${port}`, seen, images, redirect, server };
}

const canMirror = haveTool('docker-registry');

describe.skipIf(!canMirror)('the mirror fill through blob redirects (needs docker-registry)', () => {
  let registry: FakeRegistry;
  let secure: FakeRegistry;
  let cdn: Server;
  let cdnUrl: string;
  /** The blob store: bytes by digest (a test may swap them), and who asked. */
  const blobs = new Map<string, Buffer>();
  const cdnSeen: Seen[] = [];
  const mirrors: OciMirror[] = [];

  beforeAll(async () => {
    registry = await startRegistry(false);
    secure = await startRegistry(true);
    cdn = createHttp((req, res) => {
      req.resume();
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      cdnSeen.push({ path, authorization: req.headers.authorization });
      const b = blobs.get(path.slice('/store/'.length));
      if (!b) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': b.length }).end(b);
    });
    cdnUrl = `http://127.0.0.1:${await listen(cdn)}`;
  }, 30_000);

  afterAll(async () => {
    for (const m of mirrors) await m.stop();
    await close(registry?.server);
    await close(secure?.server);
    await close(cdn);
  });

  async function mirrorOf(reg: FakeRegistry): Promise<OciMirror> {
    const m = await startOciMirror({ registry: reg.name, upstreamUrl: reg.url, credentials: { username: USER, password: PASSWORD }, tlsVerify: false, host: '127.0.0.1', port: 0 });
    mirrors.push(m);
    return m;
  }

  /** Puts `img` under `repo` of `reg`, its blobs in the store, each blob GET redirected by `to`. */
  function publish(reg: FakeRegistry, repo: string, img: OciTestImage, to: Redirect): void {
    reg.images.set(repo, img);
    reg.redirect.set(repo, to);
    for (const b of [img.config, img.layer]) blobs.set(sha(b), b);
  }

  const fromMirror = (m: OciMirror, path: string) =>
    fetch(`http://${m.address}${path}`, { headers: { authorization: `Basic ${Buffer.from(`${m.username}:${m.password}`).toString('base64')}`, accept: OCI_MANIFEST } });

  it('a 307 to another server: the fill follows it without the credentials, and the mirror holds the image, digests checked', async () => {
    const img = ociImage(200_000);
    publish(registry, 'os/cdn', img, (d) => `${cdnUrl}/store/${d}`);
    const mirror = await mirrorOf(registry);
    const r = await mirror.fill('os/cdn', 'v1', 'amd64');
    expect(r).toEqual({
      digest: sha(img.manifest),
      blobsCopied: 2,
      bytesCopied: img.config.length + img.layer.length,
      size: { compressed: img.config.length + img.layer.length, layers: 1 },
    });
    // Each blob came from the store, once, and the registry's login did not go with it.
    const got = cdnSeen.filter((s) => s.path.startsWith('/store/'));
    expect(got.map((s) => s.path).sort()).toEqual([`/store/${sha(img.config)}`, `/store/${sha(img.layer)}`].sort());
    expect(got.map((s) => s.authorization)).toEqual([undefined, undefined]);
    // The registry itself was asked with them.
    expect(registry.seen.filter((s) => s.path === `/v2/os/cdn/blobs/${sha(img.layer)}`).map((s) => s.authorization)).toContain(BASIC);
    // The nodes get the same bytes from the mirror.
    const layer = await fromMirror(mirror, `/v2/os/cdn/blobs/${sha(img.layer)}`);
    expect(layer.status).toBe(200);
    expect(sha(Buffer.from(await layer.arrayBuffer()))).toBe(sha(img.layer));
    const m = await fromMirror(mirror, '/v2/os/cdn/manifests/v1');
    expect(m.headers.get('docker-content-digest')).toBe(sha(img.manifest));
  }, 60_000);

  it('bytes behind the redirect that do not match the digest: the mirror refuses the blob and the fill says which', async () => {
    const img = ociImage(50_000);
    publish(registry, 'os/tampered', img, (d) => `${cdnUrl}/store/${d}`);
    const wrong = Buffer.from(img.layer);
    wrong[0] = wrong[0]! ^ 0xff;
    blobs.set(sha(img.layer), wrong);
    const mirror = await mirrorOf(registry);
    const err = (await mirror.fill('os/tampered', 'v1', 'amd64').catch((e: unknown) => e)) as Error & { hint?: string };
    expect(err.message).toMatch(new RegExp(`^the local image mirror refused blob ${sha(img.layer)} \\(HTTP 400`));
    expect(err.hint).toMatch(/does not match its digest/);
    expect((await fromMirror(mirror, `/v2/os/tampered/blobs/${sha(img.layer)}`)).status).toBe(404);
  }, 60_000);

  it('a redirect to another scheme is refused: the message names the registry and the blob', async () => {
    const img = ociImage(10_000);
    publish(registry, 'os/ftp', img, (d) => `ftp://127.0.0.1/store/${d}`);
    const mirror = await mirrorOf(registry);
    const err = (await mirror.fill('os/ftp', 'v1', 'amd64').catch((e: unknown) => e)) as Error & { hint?: string };
    expect(err.message).toMatch(
      new RegExp(`^registry ${registry.name.replace(/\./g, '\\.')}: GET /v2/os/ftp/blobs/sha256:[0-9a-f]{64} was redirected to a ftp: URL; only http\\(s\\) is followed$`),
    );
    expect(err.hint).toMatch(/plain HTTP or elsewhere than http\(s\)/);
    expect(`${err.message}${err.hint}`).not.toContain(PASSWORD);
  }, 60_000);

  it('a registry on https redirecting a blob to plain http is refused, naming the registry and the blob; nothing fetched there', async () => {
    const img = ociImage(10_000);
    publish(secure, 'os/downgrade', img, (d) => `${cdnUrl}/store/downgrade/${d}`);
    const mirror = await mirrorOf(secure);
    const err = (await mirror.fill('os/downgrade', 'v1', 'amd64').catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(
      new RegExp(
        `^registry ${secure.name.replace(/\./g, '\\.')}: GET /v2/os/downgrade/blobs/sha256:[0-9a-f]{64} was redirected from https to plain http \\(${cdnUrl.replace(/\./g, '\\.')}\\); refused`,
      ),
    );
    expect(cdnSeen.filter((s) => s.path.startsWith('/store/downgrade/'))).toEqual([]);
  }, 60_000);

  it('a redirect loop ends after 5 hops, naming the registry', async () => {
    const img = ociImage(10_000);
    publish(registry, 'os/loop', img, (d) => `${registry.url}/v2/os/loop/blobs/${d}`);
    const mirror = await mirrorOf(registry);
    const err = (await mirror.fill('os/loop', 'v1', 'amd64').catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(new RegExp(`^registry ${registry.name.replace(/\./g, '\\.')}: more than 5 redirects for .*/v2/os/loop/blobs/sha256:`));
  }, 60_000);
});
