// Does an image reference resolve in its registry? A manifest request of the OCI distribution
// API (GET /v2/<name>/manifests/<reference>), with the authentication registries ask for: a
// 401 carrying `WWW-Authenticate: Bearer realm=...,service=...,scope=...` sends us to the realm
// for a token (Basic credentials, or a refresh token), a `Basic` challenge takes the
// credentials directly. HTTPS first; plain HTTP only for a registry marked insecure, as podman
// does with `insecure = true` in registries.conf.
import { type CheckClient, type CheckResponse, headerOf, HttpCheckError } from './check-client.js';
import {
  basicAuthorization,
  type Challenge,
  distributionError,
  fetchRegistryToken,
  hasUserPassword,
  parseChallenge,
  type RegistryCredentials,
  TokenRefused,
} from './registry-auth.js';
import { type EndpointFor, type RegistryTarget, registryTarget } from './registry-target.js';

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
  endpointFor?: EndpointFor | undefined;
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

/** The status and first distribution error of a registry's answer. */
function registryError(res: CheckResponse): { code?: string; text: string } {
  return distributionError(res.body) ?? { text: `HTTP ${res.status}` };
}

interface Target extends RegistryTarget {
  tlsVerify: boolean;
}

/** Where a request for `url` (named by the registry's own host) really goes (registry-target.ts). */
function route(url: string, q: ManifestQuery, tlsVerify: boolean): Target {
  return { ...registryTarget(url, q.endpointFor), tlsVerify };
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

/** A bearer token from the challenge's realm (registry-auth.ts), its requests routed as the registry's. */
function fetchToken(client: CheckClient, q: ManifestQuery, ch: Challenge, tlsVerify: boolean): Promise<string> {
  return fetchRegistryToken((url, req) => send(client, q, route(url, q, tlsVerify), req), ch, q.repository, q.credentials);
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
        authUsed = c?.identityToken || hasUserPassword(c) ? 'credentials' : 'anonymous';
        res = await get(`Bearer ${token}`);
      } catch (e) {
        if (!(e instanceof TokenRefused)) throw e;
        const why = e.status === 401 || e.status === 403 ? 'unauthorized' : 'status';
        return { ok: false, why, message: e.message, ...(e.status ? { status: e.status } : {}), url: shown };
      }
    } else if (ch?.scheme === 'basic' && hasUserPassword(c)) {
      authUsed = 'credentials';
      res = await get(basicAuthorization(c));
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
