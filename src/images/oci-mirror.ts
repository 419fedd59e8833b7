// The image mirror a bootc deploy with `image_download_source: local` pulls through: the CNCF
// distribution registry (Debian's `docker-registry`) as a plain registry, started for the run on
// the address the ramdisks reach and stopped (its storage removed) when the run ends. tsbm fills
// it itself (src/images/oci-copy.ts), once per image for the whole fleet, before any node pulls:
// the registry sends each blob once per run, whatever the fleet's size. (docker-registry's own
// proxy mode was the first try: 2.8 fetches a blob it does not hold twice, once into its cache
// and once streamed to the client, and once more for each client asking meanwhile.)
// The registry's credentials (a user and password, or an identity token) stay in this process,
// never on disk or in an argument. The mirror is read-only to the ramdisks: tsbm fills it through
// a second, writable docker-registry on loopback (a login that never leaves this process), and
// the ramdisks log in to the read-only one with a user and password made for this run (htpasswd,
// bcrypt) and pull the manifest digest the fill wrote, so a leaked login changes nothing they install.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { TsbmError } from '../errors.js';
import type { RegistryCredentials } from '../http/registry-auth.js';
import type { EndpointFor } from '../http/registry-target.js';
import { findProgram } from '../util/find-program.js';
import { type CopyResult, copyImage } from './oci-copy.js';
import { type RegistryProcess, startRegistryProcess } from './registry-process.js';

const MIRROR_PROGRAM = 'docker-registry';
const MIRROR_PACKAGE_HINT =
  "install Debian's docker-registry package on the controller (apt-get install docker-registry; elsewhere the CNCF distribution registry as docker-registry on the PATH), or set image_download_source: http to let every node pull from the registry itself";

export interface MirrorSpec {
  /** The registry as the image names it (host[:port]). */
  registry: string;
  /** The registry's API by its own name: http(s)://host[:port]. */
  upstreamUrl: string;
  /** Where the controller really reaches a host, when not by its name (registry_endpoints). */
  endpointFor?: EndpointFor | undefined;
  /** A user and password, or an identity token (OAuth2 refresh token). */
  credentials?: RegistryCredentials | undefined;
  /** false: the registry's certificate is not checked (image_tls_verify: false). */
  tlsVerify: boolean;
  /** The controller address the ramdisks reach; port 0: one the OS picks. */
  host: string;
  port: number;
}

export interface OciMirror {
  /** host:port, as registries.conf names the mirror. */
  address: string;
  /** The ramdisks' login to the mirror (this run only). */
  username: string;
  password: string;
  /**
   * Copies one image (repository and tag or digest, for nodes of OCI architecture `arch`) from the
   * registry into the mirror, once for the run: the first caller copies, the others wait for it
   * (`signal` ends a wait, not the copy). A failed copy is tried again by the next caller.
   */
  fill(repository: string, reference: string, arch: string, signal?: AbortSignal, onBytes?: (done: number, total: number) => void): Promise<CopyResult>;
  stop(): Promise<void>;
}

/** The docker-registry binary, or a clear error naming the package. */
export function mirrorProgram(): string {
  const found = findProgram(MIRROR_PROGRAM);
  if (!found) {
    throw new TsbmError('options', `image_download_source: local serves bootc images from an image mirror on the controller, and ${MIRROR_PROGRAM} is not on this controller's PATH`, {
      hint: MIRROR_PACKAGE_HINT,
    });
  }
  return found;
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Waits for `p`, or rejects when `signal` aborts first (no timer left behind). */
function untilDone<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason ?? new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** A login for one of the mirror's two processes: a user and a random password, as htpasswd (bcrypt) and Basic auth. */
function login(dir: string, name: string, username: string): { username: string; password: string; htpasswd: string; authorization: string } {
  const password = randomBytes(18).toString('base64url');
  const htpasswd = join(dir, `${name}.htpasswd`);
  writeFileSync(htpasswd, `${username}:${bcrypt.hashSync(password, 10)}\n`, { mode: 0o600 });
  return { username, password, htpasswd, authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` };
}

/**
 * Starts the run's mirror of one registry: two docker-registry processes on one storage. tsbm
 * fills the image through the writable one, which listens on loopback only with a login that never
 * leaves this process; the ramdisks pull from the read-only one (the storage's read-only
 * maintenance mode: every PUT, POST, PATCH and DELETE is refused) on the address they reach,
 * with a login of their own. A ramdisk's login can read the run's images and change nothing.
 */
export async function startOciMirror(spec: MirrorSpec): Promise<OciMirror> {
  const program = mirrorProgram();
  const dir = mkdtempSync(join(tmpdir(), 'tsbm-mirror-')); // 0700: the image, and the mirror's logins
  const storage = join(dir, 'storage');
  const port = spec.port || (await freePort(spec.host));
  const hostPart = spec.host.includes(':') ? `[${spec.host}]` : spec.host;
  const address = `${hostPart}:${port}`;
  const writerAddress = `127.0.0.1:${await freePort('127.0.0.1')}`;
  const nodes = login(dir, 'nodes', 'tsbm');
  const filler = login(dir, 'fill', 'tsbm-fill');
  const common = (addr: string, realm: string, htpasswd: string) => ({
    version: 0.1,
    log: { level: 'warn', accesslog: { disabled: true } },
    http: { addr, secret: randomBytes(24).toString('base64url') },
    auth: { htpasswd: { realm, path: htpasswd } },
  });
  const procs: RegistryProcess[] = [];
  const stopping = new AbortController();
  const stop = async () => {
    stopping.abort();
    await Promise.all(procs.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    procs.push(
      await startRegistryProcess(program, dir, 'fill', { ...common(writerAddress, 'tsbm-mirror-fill', filler.htpasswd), storage: { filesystem: { rootdirectory: storage } } }, writerAddress, `the image mirror for ${spec.registry} (its filling side)`),
    );
    procs.push(
      await startRegistryProcess(
        program,
        dir,
        'nodes',
        {
          ...common(address, 'tsbm-mirror', nodes.htpasswd),
          // Read-only, and no blob descriptor cache: what the filling side wrote is read from disk.
          storage: { filesystem: { rootdirectory: storage }, maintenance: { readonly: { enabled: true } }, cache: { blobdescriptor: '' } },
        },
        address,
        `the image mirror for ${spec.registry}`,
      ),
    );
  } catch (e) {
    await stop();
    throw e;
  }

  const fills = new Map<string, Promise<CopyResult>>();
  const tagArch = new Map<string, string>();
  return {
    address,
    username: nodes.username,
    password: nodes.password,
    fill(repository, reference, arch, signal, onBytes) {
      // A tag is served as one platform's manifest: nodes of another architecture would get it.
      const tagKey = `${repository}:${reference}`;
      const other = reference.startsWith('sha256:') ? undefined : tagArch.get(tagKey);
      if (other !== undefined && other !== arch) {
        return Promise.reject(
          new TsbmError('options', `${spec.registry}/${tagKey} is served by the image mirror for ${other} nodes, and this node is ${arch}`, {
            hint: 'give nodes of each architecture the image by digest (image_source ...@sha256:...), or set image_download_source: http for them',
          }),
        );
      }
      if (!reference.startsWith('sha256:')) tagArch.set(tagKey, arch);
      const key = `${repository}\0${reference}\0${arch}`;
      let f = fills.get(key);
      if (!f) {
        // The copy belongs to the run, not to the node that started it: a node's Ctrl-C or
        // time-out does not cut it off for the others; the mirror's stop() does.
        f = copyImage(
          {
            registry: spec.registry,
            baseUrl: spec.upstreamUrl,
            endpointFor: spec.endpointFor,
            repository,
            reference,
            credentials: spec.credentials,
            tlsVerify: spec.tlsVerify,
          },
          { baseUrl: `http://${writerAddress}`, authorization: filler.authorization },
          arch,
          stopping.signal,
          onBytes,
        );
        fills.set(key, f);
        f.catch(() => fills.delete(key));
      }
      return untilDone(f, signal);
    },
    stop,
  };
}
