// The pull-through mirror a bootc deploy with `image_download_source: local` pulls through: the
// CNCF distribution registry (Debian's `docker-registry`) in proxy mode, started for the run on
// the address the ramdisks reach and stopped when the run ends. The upstream credentials live
// only in its config file (0600, in a private 0700 directory removed at the end); the ramdisks
// log in to the mirror with a user and password made for this run (htpasswd, bcrypt).
//
// docker-registry 2.8 fetches a blob it does not hold twice (once into its cache, once streamed
// to the client) and once more for every client asking while that runs. So the first node pulls
// alone, the others wait until every blob it fetched is stored, then pull from the cache: the
// upstream sends each blob twice per run, whatever the fleet's size (docs/deploy-choices.md).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type Dirent, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { stringify } from 'yaml';
import { TsbmError } from '../errors.js';
import { findProgram } from '../util/find-program.js';

export const MIRROR_PROGRAM = 'docker-registry';
export const MIRROR_PACKAGE_HINT =
  "install Debian's docker-registry package on the controller (apt-get install docker-registry; elsewhere the CNCF distribution registry as docker-registry on the PATH), or set image_download_source: http to let every node pull from the registry itself";

export interface MirrorSpec {
  /** The registry as the image names it (host[:port]). */
  registry: string;
  /** Where the controller reaches it: http(s)://host[:port]. */
  upstreamUrl: string;
  credentials?: { username: string; password: string } | undefined;
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
   * Runs `pull` for one image on one node: the first node's pull runs alone; later ones wait until
   * it is done and its blobs are stored, so they come from the cache. `signal` ends a wait.
   */
  pullThrough<T>(image: string, pull: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  stop(): Promise<void>;
}

/** The docker-registry binary, or a clear error naming the package. */
export function mirrorProgram(): string {
  const found = findProgram(MIRROR_PROGRAM);
  if (!found) {
    throw new TsbmError('options', `image_download_source: local serves bootc images through a pull-through mirror, and ${MIRROR_PROGRAM} is not on this controller's PATH`, {
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

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(signal.reason ?? new Error('aborted'));
      },
      { once: true },
    );
  });

/** Waits for `p`, or rejects when `signal` aborts first (no timer left behind). */
function untilDone(p: Promise<void>, signal?: AbortSignal): Promise<void> {
  if (!signal) return p;
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason ?? new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** Uploads the mirror's cache is still writing (docker-registry commits each blob out of _uploads). */
function uploadsInProgress(storage: string): number {
  const repos = join(storage, 'docker', 'registry', 'v2', 'repositories');
  let n = 0;
  const walk = (dir: string): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (!e.isDirectory()) continue;
      if (e.name === '_uploads') n += readdirSync(join(dir, e.name)).length;
      else if (!e.name.startsWith('_')) walk(join(dir, e.name));
    }
  };
  walk(repos);
  return n;
}

/** Starts docker-registry as a pull-through mirror of one registry (with one set of credentials). */
export async function startOciMirror(spec: MirrorSpec): Promise<OciMirror> {
  const program = mirrorProgram();
  const dir = mkdtempSync(join(tmpdir(), 'tsbm-mirror-')); // 0700: the config holds the upstream password
  const storage = join(dir, 'storage');
  const username = 'tsbm';
  const password = randomBytes(18).toString('base64url');
  const port = spec.port || (await freePort(spec.host));
  const hostPart = spec.host.includes(':') ? `[${spec.host}]` : spec.host;
  const address = `${hostPart}:${port}`;
  writeFileSync(join(dir, 'htpasswd'), `${username}:${bcrypt.hashSync(password, 10)}\n`, { mode: 0o600 });
  const config = {
    version: 0.1,
    log: { level: 'warn', accesslog: { disabled: true } },
    storage: { filesystem: { rootdirectory: storage }, delete: { enabled: true } },
    http: { addr: address, secret: randomBytes(24).toString('base64url') },
    auth: { htpasswd: { realm: 'tsbm-mirror', path: join(dir, 'htpasswd') } },
    proxy: {
      remoteurl: spec.upstreamUrl,
      ...(spec.credentials ? { username: spec.credentials.username, password: spec.credentials.password } : {}),
    },
  };
  const configFile = join(dir, 'config.yml');
  writeFileSync(configFile, stringify(config), { mode: 0o600 });

  let output = '';
  const proc: ChildProcess = spawn(program, ['serve', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const killed = await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]);
      if (!killed) proc.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  };

  // Up when /v2/ asks for the mirror's login; it exits at once when it cannot reach the upstream.
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      await stop();
      const said = output.split('\n').find((l) => /panic:|level=fatal|error/i.test(l))?.replace(/^time="[^"]*" /, '') ?? output.trim().split('\n').pop() ?? '';
      throw new TsbmError('runtime', `the pull-through mirror for ${spec.registry} (${MIRROR_PROGRAM}, upstream ${spec.upstreamUrl}) did not start: ${said.slice(0, 400)}`, {
        hint: /dial tcp|no such host|connection refused|timeout/i.test(said)
          ? `the controller must reach ${spec.upstreamUrl}: check the network, or registry_endpoints for where the controller reaches ${spec.registry}`
          : /bind|address already in use|cannot assign/i.test(said)
            ? `check image_mirror_address (${address}): a free port on an address of this controller`
            : 'see the message; image_download_source: http pulls without the mirror',
      });
    }
    try {
      const r = await fetch(`http://${address}/v2/`);
      if (r.status === 401 || r.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new TsbmError('runtime', `the pull-through mirror for ${spec.registry} did not answer on ${address} within 30 s`, { hint: 'check image_mirror_address' });
    }
    await sleep(100);
  }

  const firsts = new Map<string, Promise<void>>();
  return {
    address,
    username,
    password,
    async pullThrough<T>(image: string, pull: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      const first = firsts.get(image);
      if (first) {
        await untilDone(first, signal);
        return pull();
      }
      let release = () => {};
      firsts.set(
        image,
        new Promise<void>((r) => {
          release = r;
        }),
      );
      try {
        return await pull();
      } finally {
        // The first pull is back; the cache is filled once its last blob is committed.
        const until = Date.now() + 600_000;
        while (uploadsInProgress(storage) > 0 && Date.now() < until) await sleep(100).catch(() => undefined);
        release();
      }
    },
    stop,
  };
}
