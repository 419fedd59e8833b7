// Copies one image from its registry into the run's local registry (src/images/oci-mirror.ts),
// fetching each blob from the registry exactly once: the manifest (for an index, the one
// manifest of the nodes' platform), then every blob streamed from the registry's GET into the
// local registry's PUT, which checks it against its digest. Logs in to the registry as podman
// does (src/http/registry-auth.ts: a `Bearer` challenge sends us to its token service with a
// user and password or an identity token, a `Basic` challenge takes them directly), and reaches
// it as the preflight does (src/http/registry-target.ts: with `registry_endpoints`, at the
// mapped address with the registry's name as Host and TLS name). Redirects (blob storage on a
// CDN) are followed without the credentials when they leave the registry's origin, never from
// https down to http.
import type { IncomingHttpHeaders } from 'node:http';
import { pipeline, Transform } from 'node:stream';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Agent, Dispatcher } from 'undici';
import { TsbmError } from '../errors.js';
import { followRedirect, RedirectRefused } from '../util/redirect.js';
import { type HttpCheckError, httpErrorOf } from '../http/check-client.js';
import {
  basicAuthorization,
  fetchRegistryToken,
  hasUserPassword,
  parseChallenge,
  type RegistryCredentials,
  TokenRefused,
} from '../http/registry-auth.js';
import { type EndpointFor, registryTarget } from '../http/registry-target.js';
import { systemCas } from '../http/trust.js';

const INDEX_TYPES = new Set(['application/vnd.oci.image.index.v1+json', 'application/vnd.docker.distribution.manifest.list.v2+json']);
const ACCEPT = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

export interface CopySource {
  /** The registry as the image names it (for messages). */
  registry: string;
  /** The registry by its own name: http(s)://host[:port] (requests carry it as Host and TLS name). */
  baseUrl: string;
  /** Where the controller really reaches a host, when not by its name (registry_endpoints). */
  endpointFor?: EndpointFor | undefined;
  repository: string;
  /** Tag or sha256: digest. */
  reference: string;
  /** A user and password, or an identity token (OAuth2 refresh token). */
  credentials?: RegistryCredentials | undefined;
  tlsVerify: boolean;
}

export interface CopyTarget {
  /** http://host:port of the local registry. */
  baseUrl: string;
  /** Its Authorization header value. */
  authorization: string;
}

export interface CopyResult {
  /** The manifest the nodes pull (the platform's, for an index). */
  digest: string;
  /** Blobs fetched from the registry, and their bytes (blobs the local registry held: not counted). */
  blobsCopied: number;
  bytesCopied: number;
  /** The pulled manifest's compressed size (config and layers) and layer count. */
  size: { compressed: number; layers: number };
}

interface Descriptor {
  mediaType?: string;
  digest: string;
  size: number;
  platform?: { os?: string; architecture?: string; variant?: string };
}

type Response = Dispatcher.ResponseData;

const fail = (message: string, hint: string) => new TsbmError('runtime', message, { hint });

async function drain(res: Response): Promise<void> {
  await res.body.dump().catch(() => undefined);
}

async function text(res: Response, max = 4 * 1024 * 1024, what = 'a manifest'): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of res.body) {
    const b = c as Buffer;
    n += b.length;
    if (n > max) {
      res.body.destroy();
      throw fail(`${what} larger than ${max} bytes`, 'check the image reference and the registry');
    }
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

function header(h: IncomingHttpHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Connections by TLS name: one pool for hosts reached by their own name, one per name carried to an endpoint. */
class Dispatchers {
  private readonly agents = new Map<string, Agent>();
  private trusted: SecureContext | undefined;

  constructor(
    private readonly AgentClass: typeof Agent,
    private readonly tlsVerify: boolean,
  ) {}

  for(servername: string | undefined): Agent {
    const key = servername ?? '';
    let a = this.agents.get(key);
    if (!a) {
      if (this.tlsVerify) this.trusted ??= createSecureContext({ ca: systemCas() });
      a = new this.AgentClass({
        connections: 8,
        headersTimeout: 60_000,
        bodyTimeout: 120_000,
        connect: {
          rejectUnauthorized: this.tlsVerify,
          ...(this.trusted ? { secureContext: this.trusted } : {}),
          ...(servername ? { servername } : {}),
        },
      });
      this.agents.set(key, a);
    }
    return a;
  }

  async destroy(): Promise<void> {
    // destroy, not close: after a failure, the other workers' transfers are dropped, not awaited.
    await Promise.all([...this.agents.values()].map((a) => a.destroy().catch(() => undefined)));
    this.agents.clear();
  }
}

/** What the operator can do about a connection that failed (no HTTP answer). */
function connectionHint(e: HttpCheckError, name: string): string {
  if (e.code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `the certificate must name ${name}: fix the registry's certificate (or its registry_endpoints entry), or set image_tls_verify: false for a lab registry`;
  if (e.kind === 'tls') return "install its CA in the controller's trust store (SSL_CERT_FILE), or set image_tls_verify: false for a lab registry";
  if (e.kind === 'protocol') return 'for a plain-HTTP registry set image_tls_verify: false, or give its registry_endpoints entry as http://';
  return 'check the network from the controller; registry_endpoints maps a registry to where the controller reaches it';
}

/** The registry, with its login: one token for the run's copy, fetched again on a 401. */
class Upstream {
  private authorization: string | undefined;

  constructor(
    private readonly src: CopySource,
    private readonly http: Dispatchers,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** GET a path of the registry's API; a 401 logs in once and asks again. */
  async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const res = await this.follow(`${this.src.baseUrl}${path}`, headers);
      if (res.statusCode !== 401 || attempt > 0) return res;
      await drain(res);
      await this.login(header(res.headers, 'www-authenticate'));
    }
  }

  /**
   * One request to a URL named as the registry (or a redirect, or its token service) names it,
   * sent where registry_endpoints says that host is. A connection that fails is a TsbmError
   * naming the registry and the address.
   */
  private async request(url: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: string): Promise<Response> {
    const t = registryTarget(url, this.src.endpointFor);
    const at = new URL(t.url);
    try {
      return await this.http.for(t.servername).request({
        origin: at.origin,
        path: `${at.pathname}${at.search}`,
        method,
        headers: { 'user-agent': 'tsbm-mirror', ...headers, ...t.headers },
        ...(body !== undefined ? { body } : {}),
        ...(this.signal ? { signal: this.signal } : {}),
      });
    } catch (e) {
      if (this.signal?.aborted) throw e;
      const err = httpErrorOf(e);
      const named = new URL(url);
      // Which host failed (a CDN, a token service) and where it was reached, when not plain from the name.
      const where = [named.host === this.src.registry ? '' : named.host, at.host === named.host ? '' : `at ${at.host}`].filter(Boolean).join(' ');
      throw fail(`registry ${this.src.registry}${where ? ` (${where})` : ''}: ${err.kind === 'unreachable' || err.kind === 'timeout' ? `no answer from the controller (${err.message})` : err.message}`, connectionHint(err, t.servername ?? named.hostname));
    }
  }

  /** Follows redirects (at most 5); the credentials go only to the registry's own origin. */
  private async follow(url: string, headers: Record<string, string>): Promise<Response> {
    const origin = new URL(this.src.baseUrl).origin;
    let at = new URL(url);
    for (let hops = 0; ; hops++) {
      const auth: Record<string, string> = at.origin === origin && this.authorization ? { authorization: this.authorization } : {};
      const res = await this.request(at.href, 'GET', { ...headers, ...auth });
      const location = header(res.headers, 'location');
      if (![301, 302, 303, 307, 308].includes(res.statusCode) || !location) return res;
      await drain(res);
      if (hops >= 5) throw fail(`registry ${this.src.registry}: more than 5 redirects for ${url}`, 'check the registry');
      try {
        at = new URL(followRedirect(at.href, location));
      } catch (e) {
        if (!(e instanceof RedirectRefused)) throw e;
        // Which request it was (a blob's digest, a manifest), as the registry names it.
        throw fail(`registry ${this.src.registry}: GET ${new URL(url).pathname} was ${e.message}`, 'a registry must not send its content over plain HTTP or elsewhere than http(s)');
      }
    }
  }

  private async login(challengeHeader: string | undefined): Promise<void> {
    const ch = parseChallenge(challengeHeader);
    const c = this.src.credentials;
    const reg = this.src.registry;
    if (ch?.scheme === 'basic') {
      if (hasUserPassword(c)) {
        this.authorization = basicAuthorization(c);
        return;
      }
      if (c?.identityToken) {
        throw fail(`registry ${reg} asks for a user and password (Basic auth); the pull secret holds an identity token, which only a token service takes`, 'give instance_info.image_pull_secret as user:password for this registry');
      }
      throw fail(`registry ${reg} asks for credentials`, 'set instance_info.image_pull_secret');
    }
    if (ch?.scheme !== 'bearer' || !ch.params.realm) {
      throw fail(`registry ${reg} answered 401 without a challenge tsbm can answer`, 'check the registry and image_pull_secret');
    }
    try {
      const token = await fetchRegistryToken(
        async (url, req) => {
          const res = await this.request(url, req.method, req.headers, req.body);
          return { status: res.statusCode, body: await text(res, 1024 * 1024, 'a token answer') };
        },
        ch,
        this.src.repository,
        c,
      );
      this.authorization = `Bearer ${token}`;
    } catch (e) {
      if (!(e instanceof TokenRefused)) throw e;
      throw fail(`registry ${reg}: its ${e.message}`, tokenHint(reg, c, e.status));
    }
  }
}

/** What to do when the token service refused (or gave nothing for) these credentials. */
function tokenHint(registry: string, c: RegistryCredentials | undefined, status: number): string {
  if (c?.identityToken) {
    if (status === 404 || status === 405) return `its token service takes no identity token (OAuth2 refresh token): give instance_info.image_pull_secret as user:password for ${registry}`;
    return `the identity token in instance_info.image_pull_secret was refused (expired or revoked?): log in again (podman login ${registry}) and give the new auth file, or give user:password`;
  }
  return hasUserPassword(c) ? 'check instance_info.image_pull_secret' : 'the registry needs credentials: set instance_info.image_pull_secret';
}

/** The local registry (plain HTTP, its own login). */
class Local {
  constructor(
    private readonly to: CopyTarget,
    private readonly http: Dispatcher,
    private readonly signal: AbortSignal | undefined,
  ) {}

  request(method: Dispatcher.HttpMethod, pathOrUrl: string, headers: Record<string, string> = {}, body?: Dispatcher.DispatchOptions['body']): Promise<Response> {
    const u = new URL(pathOrUrl, this.to.baseUrl);
    return this.http.request({
      origin: u.origin,
      path: `${u.pathname}${u.search}`,
      method,
      headers: { authorization: this.to.authorization, ...headers },
      ...(body !== undefined ? { body } : {}),
      ...(this.signal ? { signal: this.signal } : {}),
    });
  }

  async has(repo: string, digest: string): Promise<boolean> {
    const res = await this.request('HEAD', `/v2/${repo}/blobs/${digest}`);
    await drain(res);
    return res.statusCode === 200;
  }

  /** A monolithic upload: POST for an upload URL, PUT the body with its digest. */
  async putBlob(repo: string, d: Descriptor, body: Dispatcher.DispatchOptions['body']): Promise<void> {
    const started = await this.request('POST', `/v2/${repo}/blobs/uploads/`);
    await drain(started);
    const location = header(started.headers, 'location');
    if (started.statusCode !== 202 || !location) throw fail(`the local image mirror refused an upload (HTTP ${started.statusCode})`, 'see the mirror');
    const u = new URL(location, this.to.baseUrl);
    u.searchParams.set('digest', d.digest);
    const res = await this.request('PUT', u.href, { 'content-type': 'application/octet-stream', 'content-length': String(d.size) }, body);
    const said = (await text(res, 64 * 1024)).toString('utf8').slice(0, 300);
    if (res.statusCode !== 201) throw fail(`the local image mirror refused blob ${d.digest} (HTTP ${res.statusCode}: ${said})`, 'the registry sent content that does not match its digest, or the controller ran out of space');
  }

  async putManifest(repo: string, reference: string, mediaType: string, bytes: Buffer): Promise<void> {
    const res = await this.request('PUT', `/v2/${repo}/manifests/${reference}`, { 'content-type': mediaType }, bytes);
    const said = (await text(res, 64 * 1024)).toString('utf8').slice(0, 300);
    if (res.statusCode !== 201) throw fail(`the local image mirror refused the manifest ${reference} (HTTP ${res.statusCode}: ${said})`, 'see the mirror');
  }
}

async function manifest(up: Upstream, src: CopySource, reference: string): Promise<{ bytes: Buffer; mediaType: string; digest: string }> {
  const res = await up.get(`/v2/${src.repository}/manifests/${reference}`, { accept: ACCEPT });
  if (res.statusCode !== 200) {
    const said = (await text(res, 64 * 1024).catch(() => Buffer.alloc(0))).toString('utf8').slice(0, 300);
    throw fail(
      `registry ${src.registry} answered ${res.statusCode} for ${src.repository}:${reference}${said ? ` (${said})` : ''}`,
      res.statusCode === 401 || res.statusCode === 403 ? 'check instance_info.image_pull_secret' : 'check instance_info.image_source',
    );
  }
  const bytes = await text(res);
  const mediaType = (header(res.headers, 'content-type') ?? '').split(';')[0]?.trim() || (JSON.parse(bytes.toString('utf8')) as { mediaType?: string }).mediaType || '';
  const { createHash } = await import('node:crypto');
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  if (reference.startsWith('sha256:') && reference !== digest) {
    throw fail(`registry ${src.registry} sent a manifest whose digest is ${digest}, not ${reference}`, 'the registry or something between is corrupting content');
  }
  return { bytes, mediaType, digest };
}

/** The manifest of an index for linux/ARCH (arm64 prefers variant v8 or none). */
function pick(index: { manifests?: Descriptor[] }, arch: string): Descriptor | undefined {
  const fits = (index.manifests ?? []).filter((m) => m.platform?.os === 'linux' && m.platform.architecture === arch);
  return fits.find((m) => !m.platform?.variant || m.platform.variant === 'v8') ?? fits[0];
}

/**
 * Copies `src` into the local registry under the same repository, for nodes of architecture
 * `arch` (OCI name: amd64, arm64). A tag is pushed as the platform's manifest (an index's other
 * platforms are not fetched); a digest naming an index brings every platform, so the index can
 * be stored as it is.
 */
export async function copyImage(src: CopySource, to: CopyTarget, arch: string, signal?: AbortSignal, onBytes?: (n: number, total: number) => void): Promise<CopyResult> {
  const { Agent } = await import('undici');
  const http = new Dispatchers(Agent, src.tlsVerify);
  try {
    const up = new Upstream(src, http, signal);
    const local = new Local(to, http.for(undefined), signal);
    const top = await manifest(up, src, src.reference);
    const byDigest = src.reference.startsWith('sha256:');
    const manifests: Array<{ bytes: Buffer; mediaType: string; digest: string }> = [];
    let pulled = top;
    if (INDEX_TYPES.has(top.mediaType)) {
      const index = JSON.parse(top.bytes.toString('utf8')) as { manifests?: Descriptor[] };
      const wanted = byDigest ? (index.manifests ?? []) : [pick(index, arch)].filter((d): d is Descriptor => d !== undefined);
      if (wanted.length === 0) throw fail(`image ${src.registry}/${src.repository}:${src.reference} has no linux/${arch} manifest`, 'use an image built for the nodes\' architecture');
      for (const d of wanted) manifests.push(await manifest(up, src, d.digest));
      pulled = manifests.find((m) => m.digest === pick(index, arch)?.digest) ?? (manifests[0] as typeof top);
    } else {
      manifests.push(top);
    }
    const blobs = new Map<string, Descriptor>();
    for (const m of manifests) {
      const doc = JSON.parse(m.bytes.toString('utf8')) as { config?: Descriptor; layers?: Descriptor[] };
      for (const d of [...(doc.config ? [doc.config] : []), ...(doc.layers ?? [])]) blobs.set(d.digest, d);
    }
    const total = [...blobs.values()].reduce((a, d) => a + d.size, 0);
    const own = JSON.parse(pulled.bytes.toString('utf8')) as { config?: Descriptor; layers?: Descriptor[] };
    const size = { compressed: (own.layers ?? []).reduce((a, d) => a + d.size, own.config?.size ?? 0), layers: own.layers?.length ?? 0 };
    let done = 0;
    let copied = 0;
    let bytes = 0;
    const queue = [...blobs.values()];
    const worker = async () => {
      for (let d = queue.shift(); d; d = queue.shift()) {
        if (await local.has(src.repository, d.digest)) {
          done += d.size;
          continue;
        }
        const res = await up.get(`/v2/${src.repository}/blobs/${d.digest}`);
        if (res.statusCode !== 200) {
          await drain(res);
          throw fail(`registry ${src.registry} answered ${res.statusCode} for blob ${d.digest} of ${src.repository}`, 'check the registry');
        }
        const counted = new Transform({
          transform(c: Buffer, _enc, next) {
            done += c.length;
            onBytes?.(done, total);
            next(null, c);
          },
        });
        // pipeline: a registry connection that breaks mid-blob fails the upload, not hangs it.
        await local.putBlob(src.repository, d, pipeline(res.body, counted, () => {}));
        copied++;
        bytes += d.size;
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    for (const m of manifests) await local.putManifest(src.repository, m.digest, m.mediaType, m.bytes);
    if (byDigest) {
      if (manifests[0] !== top) await local.putManifest(src.repository, top.digest, top.mediaType, top.bytes);
    } else {
      await local.putManifest(src.repository, src.reference, pulled.mediaType, pulled.bytes);
    }
    return { digest: pulled.digest, blobsCopied: copied, bytesCopied: bytes, size };
  } finally {
    await http.destroy();
  }
}
