// The simulated lab's registry as the controller sees it: a small OCI distribution endpoint
// (manifests of the images the simulated podman knows, Bearer token auth with the lab's pull
// secret, as quay.io or a Harbor asks) and the ramdisk ISO the lab's BMCs "boot". The
// simulated ramdisks never call it: their podman reads the same catalogue from files. The lab
// inventory maps the registry's name to this server with `registry_endpoints`.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { buildInstallerIso, simInstallerFile } from '../installer/installer-iso.js';
import type { SimImage } from './images.js';

export const SIM_ISO_PATH = '/tsbm-sim-ramdisk.iso';
/** An installer ISO (see packages/lab/src/installer/installer-iso.ts) for deploy-anaconda.yml. */
export const SIM_INSTALLER_ISO_PATH = '/tsbm-sim-installer.iso';

export interface SimRegistryOptions {
  /** host:port the images are named by (the token realm uses it too). */
  registryHost: string;
  images: readonly SimImage[];
  /** user:password the registry accepts. */
  auth: string;
}

export interface SimRegistry {
  /** http://127.0.0.1:PORT */
  url: string;
  /** Method and path of every request, in order (tests count them). */
  readonly requests: readonly string[];
  close(): Promise<void>;
}

const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const MiB = 1024 * 1024;

const sha = (s: string) => `sha256:${createHash('sha256').update(s).digest('hex')}`;

/** A well-formed OCI manifest whose sizes are the catalogue's (what a memory preflight reads). */
function manifestOf(img: SimImage): string {
  const layers = 3;
  const total = img.compressedMiB * MiB;
  const each = Math.floor(total / layers);
  return JSON.stringify({
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha(`${img.ref}#config`), size: 1024 },
    layers: Array.from({ length: layers }, (_, i) => ({
      mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip',
      digest: sha(`${img.ref}#${i}`),
      size: i === layers - 1 ? total - each * (layers - 1) : each,
    })),
    ...(img.bootc ? { annotations: { 'containers.bootc': '1' } } : {}),
  });
}

function isoBytes(): Buffer {
  const b = Buffer.alloc(64 * 1024);
  b.write('TSBM simulated ramdisk ISO\n');
  return b;
}

export async function startSimRegistry(o: SimRegistryOptions): Promise<SimRegistry> {
  // repository -> tag or digest -> manifest
  const repos = new Map<string, Map<string, string>>();
  for (const img of o.images) {
    const name = img.ref.slice(o.registryHost.length + 1);
    const colon = name.lastIndexOf(':');
    const repo = name.slice(0, colon);
    const body = manifestOf(img);
    const tags = repos.get(repo) ?? new Map<string, string>();
    tags.set(name.slice(colon + 1), body);
    tags.set(sha(body), body);
    repos.set(repo, tags);
  }
  const tokens = new Set<string>();
  const iso = isoBytes();
  let installerIso: Buffer | undefined;
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const realm = `http://${o.registryHost}/token`;
  const challenge = (scope?: string) =>
    `Bearer realm="${realm}",service="${o.registryHost}"${scope ? `,scope="${scope}"` : ''}`;
  const json = (res: ServerResponse, status: number, doc: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(doc));
  const errors = (code: string, message: string) => ({ errors: [{ code, message }] });

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const u = new URL(req.url ?? '/', 'http://sim');
    requests.push(`${req.method} ${u.pathname}`);
    if (u.pathname === SIM_ISO_PATH || u.pathname === SIM_INSTALLER_ISO_PATH) {
      if (u.pathname === SIM_INSTALLER_ISO_PATH && !installerIso) installerIso = buildInstallerIso();
      const image = u.pathname === SIM_ISO_PATH || !installerIso ? iso : installerIso;
      // bytes=0-N: the preflight's probe asks for one byte, a simulated node for the head.
      const m = /^bytes=0-(\d+)$/.exec(req.headers.range ?? '');
      const body = m ? image.subarray(0, Number(m[1]) + 1) : image;
      res.writeHead(m ? 206 : 200, {
        'Content-Type': 'application/x-iso9660-image',
        'Content-Length': String(body.length),
        ...(m ? { 'Content-Range': `bytes 0-${body.length - 1}/${image.length}` } : {}),
      });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    const part = req.method === 'GET' || req.method === 'HEAD' ? simInstallerFile(u.pathname) : undefined;
    if (part) {
      const m = /^bytes=0-(\d+)$/.exec(req.headers.range ?? '');
      const body = m ? part.subarray(0, Number(m[1]) + 1) : part;
      res.writeHead(m ? 206 : 200, {
        'Content-Type': 'application/octet-stream',
        'Content-Length': String(body.length),
        ...(m ? { 'Content-Range': `bytes 0-${body.length - 1}/${part.length}` } : {}),
      });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    if (u.pathname === '/token') {
      const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1];
      if (basic !== undefined && Buffer.from(basic, 'base64').toString('utf8') !== o.auth) {
        json(res, 401, errors('UNAUTHORIZED', 'authentication required'), { 'WWW-Authenticate': `Basic realm="${o.registryHost}"` });
        return;
      }
      // Anonymous callers get a token too, good for nothing: as public registries do.
      const token = randomBytes(16).toString('hex');
      if (basic !== undefined) tokens.add(token);
      json(res, 200, { token, access_token: token, expires_in: 300 });
      return;
    }
    const m = /^\/v2\/(.+)\/manifests\/([^/]+)$/.exec(u.pathname);
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const authorized = bearer !== undefined && tokens.has(bearer);
    if (u.pathname === '/v2/' || u.pathname === '/v2') {
      if (!authorized) json(res, 401, errors('UNAUTHORIZED', 'authentication required'), { 'WWW-Authenticate': challenge() });
      else json(res, 200, {});
      return;
    }
    if (!m || (req.method !== 'GET' && req.method !== 'HEAD')) {
      json(res, 404, errors('NOT_FOUND', 'not found'));
      return;
    }
    const [, repo = '', ref = ''] = m;
    if (!authorized) {
      json(res, 401, errors('UNAUTHORIZED', 'authentication required'), { 'WWW-Authenticate': challenge(`repository:${repo}:pull`) });
      return;
    }
    const tags = repos.get(repo);
    if (!tags) {
      json(res, 404, errors('NAME_UNKNOWN', `repository name not known to registry: ${repo}`));
      return;
    }
    const body = tags.get(ref);
    if (!body) {
      json(res, 404, errors('MANIFEST_UNKNOWN', `manifest unknown: ${ref}`));
      return;
    }
    res.writeHead(200, { 'Content-Type': OCI_MANIFEST, 'Docker-Content-Digest': sha(body), 'Content-Length': String(Buffer.byteLength(body)) });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  const server = createServer(handle);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}
