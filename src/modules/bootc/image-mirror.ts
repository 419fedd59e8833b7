// From a node's variables to the run's image mirror for its image (src/images/oci-mirror.ts):
// `image_download_source: local` on a bootc deploy. One mirror per registry, upstream and
// credentials for the whole run; the deploy preflight starts it (so a missing docker-registry
// fails before any node is touched), podman_pull fills it (once per image) and pulls through it.
// Check mode plans it (planImageMirror): the same refusals, no process, nothing filled.
import { createHmac, randomBytes } from 'node:crypto';
import { TsbmError } from '../../errors.js';
import type { RegistryCredentials } from '../../http/registry-auth.js';
import type { EndpointFor } from '../../http/registry-target.js';
import { isLoopback } from '../../http/run-file-server.js';
import { isUnspecifiedAddress, parseBindAddress } from '../../http/bind-address.js';
import { type MirrorSpec, mirrorProgram, type OciMirror, startOciMirror } from '../../images/oci-mirror.js';
import type { RunServices } from '../../module-api/types.js';
import type { Vars } from '../../types.js';
import { coordinatesOf, type ImageRef } from '../../module-api/image-ref.js';
import { firstSet } from '../../inventory/node-data.js';
import { buildAuthFile, loginFor, PullSecretError } from '../../module-api/pull-secret.js';
import { parseRegistryEndpoints, RegistryEndpointsError } from './registry-endpoints.js';

export interface MirrorContext {
  services: RunServices;
  vars: Vars;
  host: string;
  secret(value: string): string;
  warn(message: string): void;
}

/** `image_download_source` (or instance_info's): http (default) or local. */
export function downloadSource(vars: Vars): 'http' | 'local' {
  const v = firstSet(undefined, vars, 'image_download_source', 'instance_info.image_download_source') ?? 'http';
  if (v === 'http' || v === 'local') return v;
  throw new TsbmError('options', `image_download_source ${JSON.stringify(v)} is neither http nor local`, {
    hint: 'http: each node pulls from the registry; local: through an image mirror the controller runs and fills once for the run',
  });
}

const KEY = randomBytes(32);

/** Where the ramdisks reach the controller: image_mirror_address, else tsbm_http_address's host. */
function bindAddress(ctx: MirrorContext): { host: string; port: number } {
  const own = ctx.vars.image_mirror_address;
  const name = own !== undefined && own !== null && own !== '' ? 'image_mirror_address' : 'tsbm_http_address';
  const raw = name === 'image_mirror_address' ? own : ctx.vars.tsbm_http_address;
  let host = '127.0.0.1';
  let port = 0;
  if (raw !== undefined && raw !== null && raw !== '') {
    const parsed = typeof raw === 'string' || typeof raw === 'number' ? parseBindAddress(String(raw)) : undefined;
    if (!parsed) throw new TsbmError('options', `${name} ${JSON.stringify(raw)} is not host or host:port`, { hint: "the controller's address on the ramdisks' network, e.g. 10.0.0.1 or 10.0.0.1:5050" });
    host = parsed.host;
    // tsbm_http_address's port is the file server's: the mirror takes its own.
    port = name === 'image_mirror_address' ? (parsed.port ?? 0) : 0;
  }
  if (isUnspecifiedAddress(host)) {
    throw new TsbmError('options', `${name} ${host} is a wildcard (it binds every address)`, {
      hint: "give the one controller address the ramdisks reach: the mirror serves an image with the registry's credentials and listens nowhere else",
    });
  }
  return { host, port };
}

/** The mirror a node's image needs (registry, upstream, login, address) and the key the run keeps it by. */
function mirrorSpec(ctx: MirrorContext, img: ImageRef, pullSecret: unknown, tlsVerify: boolean): { spec: MirrorSpec; key: string } {
  let credentials: RegistryCredentials | undefined;
  if (pullSecret !== undefined && pullSecret !== null && pullSecret !== '') {
    const raw = ctx.secret(typeof pullSecret === 'string' ? pullSecret : JSON.stringify(pullSecret));
    let login: ReturnType<typeof loginFor>;
    try {
      login = loginFor(buildAuthFile(raw, img.registry).json, img.registry, coordinatesOf(img).repository);
    } catch (e) {
      if (e instanceof PullSecretError) throw new TsbmError('options', e.message, { hint: 'fix instance_info.image_pull_secret', host: ctx.host });
      throw e;
    }
    // An identity token (OAuth2 refresh token) is exchanged at the registry's token service by
    // the fill (src/http/registry-auth.ts), in this process only.
    if (login?.identityToken) credentials = { identityToken: ctx.secret(login.identityToken) };
    else if (login?.username !== undefined && login.password !== undefined) credentials = { username: login.username, password: ctx.secret(login.password) };
  }
  let endpointFor: EndpointFor;
  try {
    endpointFor = parseRegistryEndpoints(firstSet(undefined, ctx.vars, 'registry_endpoints'));
  } catch (e) {
    if (e instanceof RegistryEndpointsError) throw new TsbmError('options', e.message, { hint: 'e.g. registry_endpoints: {"registry.lab:5000": "https://10.0.0.5:5000"}', host: ctx.host });
    throw e;
  }
  const api = img.registry === 'docker.io' ? 'registry-1.docker.io' : img.registry;
  // The fill names the registry as the image does and reaches it where registry_endpoints says,
  // with that name as Host and TLS name (src/http/registry-target.ts), as the preflight does.
  const endpoint = endpointFor(api);
  const scheme = endpoint ? new URL(endpoint).protocol : tlsVerify ? 'https:' : 'http:';
  const upstreamUrl = `${scheme}//${api}`;
  const { host, port } = bindAddress(ctx);
  if (isLoopback(host)) ctx.warn(`the image mirror listens on ${host}: only ramdisks on this machine reach it; set image_mirror_address to the controller's address on the ramdisks' network`);
  const who = credentials ? createHmac('sha256', KEY).update(JSON.stringify(credentials)).digest('base64url') : '-';
  const key = `image-mirror:${img.registry}#${upstreamUrl}#${endpoint ?? ''}#${who}#${host}:${port}`;
  return { spec: { registry: img.registry, upstreamUrl, endpointFor, credentials, tlsVerify, host, port }, key };
}

/** The run's mirror for this image, started on first use (by the preflight, or the first pull). */
export function imageMirrorFor(ctx: MirrorContext, img: ImageRef, pullSecret: unknown, tlsVerify: boolean): Promise<OciMirror> {
  const { spec, key } = mirrorSpec(ctx, img, pullSecret, tlsVerify);
  return ctx.services.get(key, () => {
    const started = (async () => {
      mirrorProgram(); // the clear error about a missing docker-registry comes first
      const m = await startOciMirror(spec);
      ctx.secret(m.password);
      return m;
    })();
    ctx.services.onClose(() => started.then((m) => m.stop(), () => undefined));
    return started;
  });
}

/**
 * Check mode: what imageMirrorFor would start, refused for the same reasons (no docker-registry,
 * a wildcard address, an unusable pull secret), with no process started and nothing filled.
 */
export function planImageMirror(ctx: MirrorContext, img: ImageRef, pullSecret: unknown, tlsVerify: boolean): string {
  const { spec } = mirrorSpec(ctx, img, pullSecret, tlsVerify);
  const program = mirrorProgram();
  const where = spec.port ? `${spec.host.includes(':') ? `[${spec.host}]` : spec.host}:${spec.port}` : `${spec.host} (a free port)`;
  return `image mirror for ${img.registry} would start on ${where} (${program}) and be filled once from the registry; check mode starts and fills nothing`;
}
