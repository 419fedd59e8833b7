// Does an image reference resolve in its registry? A manifest request of the OCI distribution
// API (GET /v2/<name>/manifests/<reference>), with the authentication registries ask for: a
// 401 carrying `WWW-Authenticate: Bearer realm=...,service=...,scope=...` sends us to the realm
// for a token (Basic credentials, or a refresh token), a `Basic` challenge takes the
// credentials directly. HTTPS first; plain HTTP only for a registry marked insecure, as podman
// does with `insecure = true` in registries.conf.
import { type CheckClient, type CheckResponse, headerOf, HttpCheckError } from './check-client.js';

interface RegistryCredentials {
  username?: string;
  password?: string;
  /** An OAuth2 refresh token (`identitytoken` in a containers auth file). */
  identityToken?: string;
}

export interface ManifestQuery {
  /** host[:port] as the image reference names it (Host header and TLS name). */
  registry: string;
  /** Repository path, e.g. `fedora/fedora-bootc`. */
  repository: string;
  /** Tag or `sha256:` digest. */
  reference: string;
  credentials?: RegistryCredentials | undefined;
  /**
   * Where the registry really is, when the controller cannot reach it by its name (split DNS, a
   * lab): `https://10.0.0.5:5000`. The certificate must still name the registry.
   */
  endpointFor?: (hostPort: string) => string | undefined;
  /** Certificates not verified and plain HTTP allowed after HTTPS fails (podman's insecure registry). */
  insecure: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
}

type ManifestFailure =
  | 'manifest_unknown'
  | 'name_unknown'
  | 'unauthorized'
  | 'denied'
  | 'unreachable'
  | 'tls'
  | 'plain_http'
  | 'timeout'
  | 'status';

export type ManifestAnswer =
  | { ok: true; digest?: string; mediaType?: string; url: string; /** The manifest itself (JSON). */ body: string }
  | { ok: false; why: ManifestFailure; message: string; status?: number; url: string };

const ACCEPT = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.docker.distribution.manifest.v1+prettyjws',
].join(', ');

/** Docker Hub's API host: `docker.io` is only the name images use. */
function apiHost(registry: string): string {
  return registry === 'docker.io' || registry === 'index.docker.io' ? 'registry-1.docker.io' : registry;
}

export interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** `Bearer realm="https://auth",service="reg",scope="repository:x:pull"` (RFC 7235, quoted or token values). */
export function parseChallenge(header: string | undefined): Challenge | undefined {
  if (!header) return undefined;
  const m = /^\s*([A-Za-z][\w-]*)\s*(.*)$/s.exec(header);
  if (!m) return undefined;
  const params: Record<string, string> = {};
  const re = /([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?\s*/gy;
  const rest = m[2] ?? '';
  re.lastIndex = 0;
  for (let p = re.exec(rest); p; p = re.exec(rest)) {
    params[(p[1] as string).toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : (p[3] ?? '');
    if (re.lastIndex >= rest.length) break;
  }
  return { scheme: (m[1] as string).toLowerCase(), params };
}

/** The first `errors[].code: message` of a distribution API error body. */
function registryError(res: CheckResponse): { code?: string; text: string } {
  try {
    const doc = JSON.parse(res.body.toString('utf8')) as { errors?: Array<{ code?: string; message?: string }> };
    const e = doc.errors?.[0];
    if (e) return { ...(e.code ? { code: e.code } : {}), text: [e.code, e.message].filter(Boolean).join(': ') };
  } catch {
    // not JSON: the status tells the story
  }
  return { text: `HTTP ${res.status}` };
}

const basic = (c: RegistryCredentials) => `Basic ${Buffer.from(`${c.username ?? ''}:${c.password ?? ''}`).toString('base64')}`;
const hasUserPass = (c: RegistryCredentials | undefined): c is RegistryCredentials => !!c?.username && c.password !== undefined;

interface Target {
  url: string;
  tlsVerify: boolean;
  headers: Record<string, string>;
  servername?: string;
}

/** Where a request for `url` (named by the registry's own host) really goes. */
function route(url: string, q: ManifestQuery, tlsVerify: boolean): Target {
  const u = new URL(url);
  const to = q.endpointFor?.(u.host);
  if (!to) return { url: u.href, tlsVerify, headers: {} };
  const e = new URL(to);
  const real = new URL(`${u.pathname}${u.search}`, `${e.protocol}//${e.host}`);
  return { url: real.href, tlsVerify, headers: { host: u.host }, servername: u.hostname };
}

async function send(
  client: CheckClient,
  q: ManifestQuery,
  t: Target,
  extra: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; maxBodyBytes?: number },
): Promise<CheckResponse> {
  return client.request(t.url, {
    method: extra.method ?? 'GET',
    headers: { 'User-Agent': 'tsbm-preflight', ...t.headers, ...(extra.headers ?? {}) },
    ...(extra.body !== undefined ? { body: extra.body } : {}),
    tlsVerify: t.tlsVerify,
    ...(t.servername ? { servername: t.servername } : {}),
    ...(q.timeoutMs !== undefined ? { timeoutMs: q.timeoutMs } : {}),
    ...(q.signal ? { signal: q.signal } : {}),
    maxBodyBytes: extra.maxBodyBytes ?? 64 * 1024,
  });
}

class TokenRefused extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** A bearer token from the challenge's realm, for pulling this repository. */
async function fetchToken(client: CheckClient, q: ManifestQuery, ch: Challenge, tlsVerify: boolean): Promise<string> {
  const realm = ch.params.realm;
  if (!realm) throw new TokenRefused('the registry asked for a Bearer token but named no realm', 0);
  const scope = ch.params.scope ?? `repository:${q.repository}:pull`;
  const c = q.credentials;
  const t = route(new URL(realm).href, q, tlsVerify);
  let res: CheckResponse;
  if (c?.identityToken) {
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: c.identityToken,
      service: ch.params.service ?? '',
      scope,
      client_id: 'tsbm',
    });
    res = await send(client, q, t, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
  } else {
    const u = new URL(t.url);
    if (ch.params.service) u.searchParams.set('service', ch.params.service);
    u.searchParams.set('scope', scope);
    res = await send(client, q, { ...t, url: u.href }, { headers: hasUserPass(c) ? { Authorization: basic(c) } : {} });
  }
  if (res.status !== 200) throw new TokenRefused(`token service ${displayHost(realm)} answered ${registryError(res).text}`, res.status);
  try {
    const doc = JSON.parse(res.body.toString('utf8')) as { token?: string; access_token?: string };
    const token = doc.token ?? doc.access_token;
    if (typeof token === 'string' && token) return token;
  } catch {
    // falls through
  }
  throw new TokenRefused(`token service ${displayHost(realm)} gave no token`, res.status);
}

function displayHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'of the registry';
  }
}

/** One try at one base URL (https or http). Connection failures throw HttpCheckError. */
async function resolveAt(client: CheckClient, q: ManifestQuery, base: string, tlsVerify: boolean): Promise<ManifestAnswer> {
  const path = `/v2/${q.repository}/manifests/${q.reference}`;
  const t = route(`${base}${path}`, q, tlsVerify);
  const shown = `${base}${path}`;
  const get = (auth?: string) =>
    send(client, q, t, { headers: { Accept: ACCEPT, ...(auth ? { Authorization: auth } : {}) }, maxBodyBytes: 4 * 1024 * 1024 });
  let res = await get();
  let authUsed: 'none' | 'anonymous' | 'credentials' = 'none';
  if (res.status === 401) {
    const ch = parseChallenge(headerOf(res.headers, 'www-authenticate'));
    const c = q.credentials;
    if (ch?.scheme === 'bearer') {
      try {
        const token = await fetchToken(client, q, ch, tlsVerify);
        authUsed = c?.identityToken || hasUserPass(c) ? 'credentials' : 'anonymous';
        res = await get(`Bearer ${token}`);
      } catch (e) {
        if (!(e instanceof TokenRefused)) throw e;
        const why = e.status === 401 || e.status === 403 ? 'unauthorized' : 'status';
        return { ok: false, why, message: e.message, ...(e.status ? { status: e.status } : {}), url: shown };
      }
    } else if (ch?.scheme === 'basic' && hasUserPass(c)) {
      authUsed = 'credentials';
      res = await get(basic(c));
    }
  }
  if (res.status === 200) {
    const digest = headerOf(res.headers, 'docker-content-digest');
    const mediaType = headerOf(res.headers, 'content-type')?.split(';')[0];
    return { ok: true, ...(digest ? { digest } : {}), ...(mediaType ? { mediaType } : {}), url: shown, body: res.body.toString('utf8') };
  }
  const err = registryError(res);
  if (res.status === 404 || err.code === 'MANIFEST_UNKNOWN' || err.code === 'NAME_UNKNOWN') {
    const why = err.code === 'NAME_UNKNOWN' ? 'name_unknown' : 'manifest_unknown';
    return { ok: false, why, message: err.text, status: res.status, url: shown };
  }
  if (res.status === 401 || res.status === 403) {
    // Anonymous access refused: a private repository, or (Docker Hub) one that does not exist.
    const why = authUsed === 'credentials' ? (res.status === 403 ? 'denied' : 'unauthorized') : 'unauthorized';
    return { ok: false, why, message: `${err.text}${authUsed === 'credentials' ? '' : ' (no credentials sent)'}`, status: res.status, url: shown };
  }
  return { ok: false, why: 'status', message: err.text, status: res.status, url: shown };
}

export async function resolveManifest(client: CheckClient, q: ManifestQuery): Promise<ManifestAnswer> {
  const host = apiHost(q.registry);
  const mapped = q.endpointFor?.(host);
  // An endpoint given as http:// is plain HTTP by the operator's own word; otherwise HTTPS.
  const plainOnly = mapped ? new URL(mapped).protocol === 'http:' : false;
  const https = `https://${host}`;
  const http = `http://${host}`;
  const failed = (e: HttpCheckError, url: string): ManifestAnswer => {
    const why: ManifestFailure = e.kind === 'tls' ? 'tls' : e.kind === 'timeout' ? 'timeout' : e.kind === 'protocol' ? 'plain_http' : 'unreachable';
    return { ok: false, why, message: e.message, url };
  };
  if (plainOnly) {
    try {
      return await resolveAt(client, q, http, false);
    } catch (e) {
      if (e instanceof HttpCheckError && e.kind !== 'aborted') return failed(e, `${http}/v2/`);
      throw e;
    }
  }
  try {
    return await resolveAt(client, q, https, !q.insecure);
  } catch (e) {
    if (!(e instanceof HttpCheckError) || e.kind === 'aborted') throw e;
    // podman's rule for an insecure registry: when HTTPS does not work, plain HTTP.
    if (!q.insecure) return failed(e, `${https}/v2/`);
    try {
      return await resolveAt(client, q, http, false);
    } catch (e2) {
      if (e2 instanceof HttpCheckError && e2.kind !== 'aborted') return failed(e2, `${http}/v2/`);
      throw e2;
    }
  }
}
