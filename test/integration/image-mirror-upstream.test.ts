// The image mirror's fill (image_download_source: local) against upstreams the project did not
// tailor, through imageMirrorFor as podman_pull calls it, into a real docker-registry:
// - a registry whose token service takes only the OAuth2 refresh-token grant, and a pull secret
//   holding an identity token (`identitytoken`, as `podman login` stores for Azure ACR): the fill
//   POSTs grant_type=refresh_token and pulls with the access token; a stale token fails in one
//   line naming the registry and what to do; the token reaches no output, file or command line;
// - a registry reached through registry_endpoints (registry.lab:PORT at https://127.0.0.1:PORT)
//   whose certificate names registry.lab only and which answers only requests for that Host: the
//   fill sends the name as Host and TLS name (its token realm too); a certificate the controller
//   does not trust fails in one line saying what to do.
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageMirrorFor } from '../../src/modules/bootc/image-mirror.js';
import { parseImageSource } from '../../src/module-api/image-ref.js';
import { TsbmError } from '../../src/errors.js';
import { MASK } from '../../src/output/redact.js';
import { certificateFor, type SelfSignedCert } from '../../packages/lab/src/bmc/tls.js';
import { haveTool } from '../e2e/lab/run.js';
import { makeCtx, type TestCtx, TestServices } from './redfish-helpers.js';
import { OCI_MANIFEST, type OciTestImage, ociImage, sha } from '../helpers/oci-image.js';

const REFRESH_TOKEN = 'idt-7f3c9a-refresh-only-token';
const USER = 'puller';
const PASSWORD = 'nam3d-host-pull-pw';
const SERVICE = 'fake-registry.test';

interface Seen {
  method: string;
  path: string;
  host: string | undefined;
  /** The TLS name the client asked for (SNI); undefined on plain HTTP or without SNI. */
  sni: string | false | null | undefined;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

interface Upstream {
  /** host:port, as the image names it. */
  name: string;
  port: number;
  seen: Seen[];
  server: Server;
}

/**
 * A registry's API with its token service on the same origin (as ACR's /oauth2/token): Bearer
 * challenges naming `https?://NAME/oauth2/token`; the token service takes only the grants given
 * (POST grant_type=refresh_token with REFRESH_TOKEN; GET with Basic USER:PASSWORD); requests for
 * another Host than NAME get 421. Serves `img` as os/bootc:v1.
 */
async function startUpstream(opts: { name: (port: number) => string; cert?: SelfSignedCert; grants: Array<'refresh_token' | 'password'>; img: OciTestImage }): Promise<Upstream> {
  const seen: Seen[] = [];
  const access = `access-${randomBytes(8).toString('hex')}`;
  let name = '';
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://x');
      seen.push({
        method: req.method ?? '',
        path: u.pathname,
        host: req.headers.host,
        sni: (req.socket as TLSSocket).servername,
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        body,
      });
      const json = (status: number, doc: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(doc));
      if (req.headers.host !== name) {
        json(421, { errors: [{ code: 'MISDIRECTED', message: `this server is ${name}` }] });
        return;
      }
      if (u.pathname === '/oauth2/token') {
        const form = new URLSearchParams(body);
        const refreshOk =
          opts.grants.includes('refresh_token') &&
          req.method === 'POST' &&
          req.headers['content-type'] === 'application/x-www-form-urlencoded' &&
          form.get('grant_type') === 'refresh_token' &&
          form.get('refresh_token') === REFRESH_TOKEN &&
          form.get('service') === SERVICE &&
          form.get('scope') === 'repository:os/bootc:pull' &&
          !!form.get('client_id');
        const passwordOk =
          opts.grants.includes('password') &&
          req.method === 'GET' &&
          req.headers.authorization === `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}` &&
          u.searchParams.get('service') === SERVICE &&
          u.searchParams.get('scope') === 'repository:os/bootc:pull';
        if (refreshOk || passwordOk) json(200, { access_token: access, expires_in: 300 });
        else json(401, { errors: [{ code: 'UNAUTHORIZED', message: 'invalid grant' }] });
        return;
      }
      if (req.headers.authorization !== `Bearer ${access}`) {
        const realm = `${opts.cert ? 'https' : 'http'}://${name}/oauth2/token`;
        json(401, { errors: [{ code: 'UNAUTHORIZED', message: 'authentication required' }] }, {
          'WWW-Authenticate': `Bearer realm="${realm}",service="${SERVICE}",scope="repository:os/bootc:pull"`,
        });
        return;
      }
      const m = /^\/v2\/os\/bootc\/(manifests|blobs)\/([^/]+)$/.exec(u.pathname);
      if (m?.[1] === 'manifests' && m[2] === 'v1') {
        res.writeHead(200, { 'Content-Type': OCI_MANIFEST, 'Content-Length': opts.img.manifest.length }).end(opts.img.manifest);
        return;
      }
      const blob = m?.[1] === 'blobs' ? [opts.img.config, opts.img.layer].find((b) => sha(b) === m[2]) : undefined;
      if (blob) {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': blob.length }).end(blob);
        return;
      }
      json(404, { errors: [{ code: 'MANIFEST_UNKNOWN', message: 'unknown' }] });
    });
  };
  const server = opts.cert ? (createHttps({ cert: opts.cert.certPem, key: opts.cert.keyPem }, handle) as unknown as Server) : createHttp(handle);
  server.on('tlsClientError', () => {});
  const port = await new Promise<number>((ok) => server.listen(0, '127.0.0.1', () => ok((server.address() as AddressInfo).port)));
  name = opts.name(port);
  return { name, port, seen, server };
}

function close(server: Server | undefined): Promise<void> {
  if (!server) return Promise.resolve();
  server.closeAllConnections();
  return new Promise((ok) => server.close(() => ok()));
}

/** A podman auth file as `podman login` writes it for a registry that hands out refresh tokens. */
const identityAuthFile = (registry: string, token: string) =>
  JSON.stringify({ auths: { [registry]: { auth: Buffer.from('00000000-0000-0000-0000-000000000000:').toString('base64'), identitytoken: token } } });

const mirrorDirs = () => new Set(readdirSync(tmpdir()).filter((f) => f.startsWith('tsbm-mirror-')));

/**
 * The regular files of the mirror directories made since `before` (the mirror's config, its
 * htpasswd, its storage) and every process's command line: none may hold `secret`.
 */
function leaksOnDisk(secret: string, before: Set<string>): string[] {
  const hits: string[] = [];
  const walk = (d: string) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && readFileSync(p).includes(secret)) hits.push(p);
    }
  };
  const made = [...mirrorDirs()].filter((d) => !before.has(d));
  if (made.length === 0) hits.push('(no mirror directory found to check)');
  for (const d of made) walk(join(tmpdir(), d));
  for (const pid of readdirSync('/proc').filter((f) => /^\d+$/.test(f))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`).includes(secret)) hits.push(`/proc/${pid}/cmdline`);
    } catch {
      // gone
    }
  }
  return hits;
}

const fromMirror = (m: { address: string; username: string; password: string }, path: string) =>
  fetch(`http://${m.address}${path}`, { headers: { authorization: `Basic ${Buffer.from(`${m.username}:${m.password}`).toString('base64')}`, accept: OCI_MANIFEST } });

const canMirror = haveTool('docker-registry');

describe.skipIf(!canMirror)('the mirror fill with an identity token (needs docker-registry)', () => {
  const img = ociImage(150_000);
  let up: Upstream;
  const ctxs: TestCtx[] = [];
  beforeAll(async () => {
    up = await startUpstream({ name: (port) => `127.0.0.1:${port}`, grants: ['refresh_token'], img });
  });
  afterAll(async () => {
    for (const t of ctxs) await t.close();
    await close(up?.server);
  });
  const ctxFor = () => {
    const t = makeCtx({}, { services: new TestServices() });
    ctxs.push(t);
    return t;
  };

  it('the token is exchanged at the token service (POST, grant_type=refresh_token) and the fill pulls with the access token', async () => {
    const t = ctxFor();
    const ref = parseImageSource(`oci://${up.name}/os/bootc:v1`);
    const before = mirrorDirs();
    // image_tls_verify: false, so the registry is plain HTTP, as a lab's.
    const mirror = await imageMirrorFor(t.ctx, ref, identityAuthFile(up.name, REFRESH_TOKEN), false);
    up.seen.length = 0;
    const r = await mirror.fill('os/bootc', 'v1', 'amd64');
    expect(r).toMatchObject({ digest: sha(img.manifest), blobsCopied: 2, bytesCopied: img.config.length + img.layer.length });
    const tokenRequests = up.seen.filter((s) => s.path === '/oauth2/token');
    expect(tokenRequests.length).toBeGreaterThan(0);
    for (const s of tokenRequests) {
      expect(s.method).toBe('POST');
      expect(s.contentType).toBe('application/x-www-form-urlencoded');
      expect(s.authorization).toBeUndefined();
      const form = Object.fromEntries(new URLSearchParams(s.body));
      expect(form).toEqual({ grant_type: 'refresh_token', refresh_token: REFRESH_TOKEN, service: SERVICE, scope: 'repository:os/bootc:pull', client_id: 'tsbm' });
    }
    // The registry itself never saw the refresh token: it got the access token.
    const api = up.seen.filter((s) => s.path.startsWith('/v2/'));
    expect(api.some((s) => s.authorization?.startsWith('Bearer access-'))).toBe(true);
    expect(JSON.stringify(api)).not.toContain(REFRESH_TOKEN);
    // The nodes get the image from the mirror.
    const layer = await fromMirror(mirror, `/v2/os/bootc/blobs/${sha(img.layer)}`);
    expect(sha(Buffer.from(await layer.arrayBuffer()))).toBe(sha(img.layer));
    // The token is a secret of the run: registered for redaction, and nowhere on disk or in a
    // command line (the mirror's config, its htpasswd, docker-registry's argv).
    expect(t.redactor.redact(`x ${REFRESH_TOKEN} x`)).toBe(`x ${MASK} x`);
    expect(leaksOnDisk(REFRESH_TOKEN, before)).toEqual([]);
    expect(t.emitted()).not.toContain(REFRESH_TOKEN);
  }, 60_000);

  it('a stale identity token: one line naming the registry, what to do, and no token anywhere', async () => {
    const stale = 'idt-stale-0b1d5e-expired-token';
    const t = ctxFor();
    const ref = parseImageSource(`oci://${up.name}/os/bootc:v1`);
    const before = mirrorDirs();
    const mirror = await imageMirrorFor(t.ctx, ref, identityAuthFile(up.name, stale), false);
    const err = (await mirror.fill('os/bootc', 'v1', 'amd64').catch((e: unknown) => e)) as TsbmError;
    expect(err).toBeInstanceOf(TsbmError);
    expect(err.message).toBe(`registry ${up.name}: its token service ${up.name} answered 401 (UNAUTHORIZED: invalid grant)`);
    expect(err.hint).toMatch(new RegExp(`identity token in instance_info\\.image_pull_secret was refused .*podman login ${up.name.replace(/\./g, '\\.')}`));
    expect(`${err.message}\n${err.hint}`.split('\n')).toHaveLength(2);
    expect(`${err.message}${err.hint}${err.stack}`).not.toContain(stale);
    expect(t.emitted()).not.toContain(stale);
    expect(t.redactor.redact(stale)).toBe(MASK);
    expect(leaksOnDisk(stale, before)).toEqual([]);
  }, 60_000);
});

describe.skipIf(!canMirror)('the mirror fill through registry_endpoints, certificate and Host for the name only (needs docker-registry)', () => {
  const img = ociImage(120_000);
  const trusted = certificateFor(['registry.lab']);
  const stranger = certificateFor(['registry.lab']); // another CA, which the controller does not trust
  let dir: string;
  let savedCaFile: string | undefined;
  let named: Upstream;
  let untrusted: Upstream;
  const ctxs: TestCtx[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-upstream-ca-'));
    // The controller's trust store holds the registry's CA (read once per process, on the first
    // verifying client: nothing in this file verified before).
    writeFileSync(join(dir, 'ca.pem'), trusted.caPem);
    savedCaFile = process.env.SSL_CERT_FILE;
    process.env.SSL_CERT_FILE = join(dir, 'ca.pem');
    named = await startUpstream({ name: (port) => `registry.lab:${port}`, cert: trusted, grants: ['password', 'refresh_token'], img });
    untrusted = await startUpstream({ name: (port) => `registry.lab:${port}`, cert: stranger, grants: ['password'], img });
  });
  afterAll(async () => {
    for (const t of ctxs) await t.close();
    await close(named?.server);
    await close(untrusted?.server);
    if (savedCaFile === undefined) delete process.env.SSL_CERT_FILE;
    else process.env.SSL_CERT_FILE = savedCaFile;
    if (dir && existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  });
  const ctxFor = (up: Upstream) => {
    const t = makeCtx({ registry_endpoints: { [up.name]: `https://127.0.0.1:${up.port}` } }, { services: new TestServices() });
    ctxs.push(t);
    return t;
  };

  it("reaches https://127.0.0.1:PORT for registry.lab:PORT with that name as Host and TLS name, the token realm too; the certificate is checked", async () => {
    const t = ctxFor(named);
    const ref = parseImageSource(`oci://${named.name}/os/bootc:v1`);
    const mirror = await imageMirrorFor(t.ctx, ref, Buffer.from(`${USER}:${PASSWORD}`).toString('base64'), true);
    named.seen.length = 0;
    const r = await mirror.fill('os/bootc', 'v1', 'amd64');
    expect(r).toMatchObject({ digest: sha(img.manifest), blobsCopied: 2 });
    expect(named.seen.length).toBeGreaterThanOrEqual(5); // manifest 401, token, manifest, 2 blobs
    for (const s of named.seen) {
      expect(s.host).toBe(named.name);
      expect(s.sni).toBe('registry.lab');
    }
    expect(named.seen.filter((s) => s.path === '/oauth2/token').map((s) => s.method)).toEqual(['GET']);
    const m = await fromMirror(mirror, '/v2/os/bootc/manifests/v1');
    expect(m.headers.get('docker-content-digest')).toBe(sha(img.manifest));
    expect(t.emitted()).not.toContain(PASSWORD);
  }, 60_000);

  it('an identity token through registry_endpoints: the POST goes to the realm by the registry name too (the ACR shape)', async () => {
    const t = ctxFor(named);
    const ref = parseImageSource(`oci://${named.name}/os/bootc:v1`);
    const mirror = await imageMirrorFor(t.ctx, ref, identityAuthFile(named.name, REFRESH_TOKEN), true);
    named.seen.length = 0;
    const r = await mirror.fill('os/bootc', 'v1', 'amd64');
    expect(r.digest).toBe(sha(img.manifest));
    const token = named.seen.filter((s) => s.path === '/oauth2/token');
    expect(token.map((s) => [s.method, s.host, s.sni])).toEqual([['POST', named.name, 'registry.lab']]);
  }, 60_000);

  it('a certificate the controller does not trust: one line naming the registry and where, saying what to do', async () => {
    const t = ctxFor(untrusted);
    const ref = parseImageSource(`oci://${untrusted.name}/os/bootc:v1`);
    const mirror = await imageMirrorFor(t.ctx, ref, Buffer.from(`${USER}:${PASSWORD}`).toString('base64'), true);
    const err = (await mirror.fill('os/bootc', 'v1', 'amd64').catch((e: unknown) => e)) as TsbmError;
    expect(err).toBeInstanceOf(TsbmError);
    expect(err.message).toMatch(
      new RegExp(`^registry registry\\.lab:${untrusted.port} \\(at 127\\.0\\.0\\.1:${untrusted.port}\\): certificate not trusted \\((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)\\)$`),
    );
    expect(err.hint).toMatch(/install its CA in the controller's trust store \(SSL_CERT_FILE\), or set image_tls_verify: false/);
    expect(untrusted.seen).toEqual([]); // no request got through
  }, 60_000);
});

describe('the mirror reads registry_endpoints as the preflight does', () => {
  it('a malformed entry is refused before anything starts, saying what the value should be', () => {
    const t = makeCtx({ registry_endpoints: { 'registry.lab:5000': 'ftp://10.0.0.5' } }, { services: new TestServices() });
    const ref = parseImageSource('oci://registry.lab:5000/os/bootc:v1');
    let err: TsbmError | undefined;
    try {
      void imageMirrorFor(t.ctx, ref, undefined, true);
    } catch (e) {
      err = e as TsbmError;
    }
    expect(err).toBeInstanceOf(TsbmError);
    expect(err?.message).toBe('registry_endpoints "registry.lab:5000": "ftp://10.0.0.5" is not an http(s)://host[:port] URL');
    expect(err?.hint).toMatch(/registry_endpoints: \{"registry\.lab:5000": "https:\/\/10\.0\.0\.5:5000"\}/);
  });
});
