// Dialing one SSH connection: through the jump hosts (each a forwarded channel of the one
// before) to the target, each hop's host key checked and its login made (ssh-auth.ts), with
// keepalives. Every failure is an UnreachableError that says which hop and what to do.
import { Socket } from 'node:net';
import type { ClientChannel, ConnectConfig } from 'ssh2';
import { HostKeyError, UnreachableError } from '../errors.js';
import { coalesceWrites } from '../util/coalesce-writes.js';
import { type AuthConfig, authConfig, passwordOnlyIfVerified } from './ssh-auth.js';
import { describeConnectError, HANDSHAKE_DROPPED_HINT, type Hop } from './ssh-connect-errors.js';
import { type HostKeyCheck, prepareHostKeyCheck } from './host-key.js';
import { parseJump } from './jump.js';
import { Client } from './ssh2-lib.js';
import type { ConnectionSpec } from './types.js';

export interface DialOptions {
  signal?: AbortSignal | undefined;
  /** Warnings (host key checking off, new host key recorded). */
  onWarning?: ((message: string) => void) | undefined;
}

/** The target's client and the jump clients it runs through (ended with it). */
export interface Dialed {
  client: Client;
  jumps: Client[];
}

/** The hops of `spec` in order: its jump hosts, then the target. */
function hopsOf(spec: ConnectionSpec): Hop[] {
  const hops: Hop[] = spec.jump
    ? parseJump(spec.jump).map((j) => ({
        label: `jump host ${j.address}:${j.port}`,
        address: j.address,
        port: j.port,
        user: j.user ?? spec.user,
      }))
    : [];
  hops.push({ label: spec.host, address: spec.address, port: spec.port, user: spec.user });
  return hops;
}

/** Connects to `spec`'s target through its jump hosts; the caller owns what it returns. */
export async function dial(spec: ConnectionSpec, opts: DialOptions): Promise<Dialed> {
  const hops = hopsOf(spec);
  const auth = authConfig(spec);
  const jumps: Client[] = [];
  let sock: NodeJS.ReadableStream | undefined;
  try {
    for (const [i, hop] of hops.entries()) {
      const last = i === hops.length - 1;
      const client = await dialHop(spec, hop, auth, sock, last, opts);
      if (last) return { client, jumps };
      jumps.push(client);
      sock = await forwardTo(spec.host, client, hop, hops[i + 1]!);
    }
  } catch (e) {
    for (const j of jumps) j.end();
    throw e;
  }
  throw new Error('unreachable: no hops');
}

/** A channel from the jump host `via` to the next hop, the socket of the next handshake. */
function forwardTo(host: string, client: Client, via: Hop, next: Hop): Promise<ClientChannel> {
  return new Promise<ClientChannel>((resolve, reject) =>
    client.forwardOut('127.0.0.1', 0, next.address, next.port, (err, ch) => {
      if (!err) return resolve(ch);
      reject(
        new UnreachableError(
          host,
          `${via.label} cannot reach ${next.address}:${next.port}: ${err.message}`,
          err,
          'check the target address from the jump host, and that it allows TCP forwarding',
        ),
      );
    }),
  );
}

/** One hop's handshake and login: its host key checked as the spec says. */
async function dialHop(
  spec: ConnectionSpec,
  hop: Hop,
  auth: AuthConfig,
  sock: NodeJS.ReadableStream | undefined,
  isTarget: boolean,
  opts: DialOptions,
): Promise<Client> {
  const check = await prepareHostKeyCheck({
    host: isTarget ? spec.host : `${spec.host} via ${hop.label}`,
    address: hop.address,
    port: hop.port,
    mode: spec.hostKeyChecking,
    ...(spec.knownHostsFile ? { knownHostsFile: spec.knownHostsFile } : {}),
    ...(isTarget && spec.hostKeyFingerprint ? { pinnedFingerprint: spec.hostKeyFingerprint } : {}),
    ...(opts.onWarning ? { onWarning: opts.onWarning } : {}),
  });
  const withheld = { password: false };
  const config: ConnectConfig = {
    host: hop.address,
    port: hop.port,
    username: hop.user,
    readyTimeout: spec.connectTimeoutMs,
    keepaliveInterval: spec.keepaliveIntervalMs ?? 15_000,
    keepaliveCountMax: 3,
    hostVerifier: check.hostVerifier,
    ...(check.serverHostKey ? { algorithms: { serverHostKey: check.serverHostKey as never } } : {}),
    ...(sock ? { sock: sock as ConnectConfig['sock'] } : {}),
    ...auth,
    authHandler: passwordOnlyIfVerified(auth, check.verified, () => {
      withheld.password = true;
    }),
  };
  return handshake(config, { spec, hop, check, withheld, signal: opts.signal });
}

interface HandshakeCtx {
  spec: ConnectionSpec;
  hop: Hop;
  check: HostKeyCheck;
  /** Set when the password was not offered to an unverified host key (ssh-auth.ts). */
  withheld: { password: boolean };
  signal: AbortSignal | undefined;
}

/** Starts the client and settles when it is ready or the handshake failed. */
function handshake(config: ConnectConfig, h: HandshakeCtx): Promise<Client> {
  const { spec, hop, signal } = h;
  const client = new Client();
  // ssh2 may report more than one error for one failure (and jump clients keep running):
  // a permanent no-op listener keeps a late one from becoming an uncaught exception.
  client.on('error', () => {});
  return new Promise<Client>((resolve, reject) => {
    const onAbort = () => {
      client.end();
      reject(new UnreachableError(spec.host, `connecting to ${hop.address}:${hop.port} was aborted`));
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    let ready = false;
    client.once('ready', () => {
      ready = true;
      signal?.removeEventListener('abort', onAbort);
      resolve(client);
    });
    // The handshake failed: a host key problem wins over whatever the transport said.
    const fail = (cause: Error | undefined, message: string, hint: string | undefined) => {
      signal?.removeEventListener('abort', onAbort);
      if (ready) return;
      const hk = h.check.failure();
      reject(hk ? new HostKeyError(spec.host, hk.message, cause, hk.hint) : new UnreachableError(spec.host, message, cause, hint));
    };
    watchHandshake(client, h, fail, () => ready);
    client.connect(config);
    tuneSocket(client);
  });
}

/** Turns the client's error or early close into `fail`'s message and hint. */
function watchHandshake(
  client: Client,
  h: HandshakeCtx,
  fail: (cause: Error | undefined, message: string, hint: string | undefined) => void,
  isReady: () => boolean,
): void {
  const { spec, hop } = h;
  client.once('error', (err: Error & { code?: string; level?: string }) => {
    if (!isReady()) client.end();
    const d = describeConnectError(err, hop);
    const hint = h.withheld.password
      ? `ssh_password is offered only to a host whose key is verified (ssh_host_key_checking is ${spec.hostKeyChecking}): record its key in known_hosts, pin ssh_host_key_fingerprint, or log in with a key`
      : d.hint;
    fail(err, `${spec.host}: ${d.message}`, hint);
  });
  // A server that drops the TCP connection during the handshake can leave ssh2 with a
  // 'close' and no 'error' (its ready timeout is cleared too): without this the connect, and
  // the task waiting on it, would never end. After an 'error' this reject changes nothing.
  client.once('close', () =>
    fail(undefined, `${spec.host}: ${hop.address}:${hop.port} closed the connection during the SSH handshake`, HANDSHAKE_DROPPED_HINT),
  );
}

function tuneSocket(client: Client): void {
  // Request/response traffic: with Nagle, a packet written while the previous one is not yet
  // acknowledged waits for the peer's delayed ACK (measured ~5 ms per command round on 20
  // loopback hosts). Applies when the socket connects; a jump channel has no such option.
  client.setNoDelay(true);
  // ssh2 keeps the socket it made in _sock (1.x); batch its per-packet writes when it is there.
  const made = (client as unknown as { _sock?: unknown })._sock;
  if (made instanceof Socket) coalesceWrites(made);
}
