// SSH connection over ssh2: one TCP connection per host reused for every exec (each exec is a
// channel), one SFTP session reused for put/get (piped over exec where the server has no SFTP:
// transfer-choice.ts), host keys verified, optional jump chain.
// A dropped connection rejects what is in flight and is re-established on next use.
import { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ClientChannel, ConnectConfig, SFTPWrapper } from 'ssh2';
import { Client } from './ssh2-lib.js';
import { TsbmError, UnreachableError } from '../errors.js';
import { getCap, sftpReadCapped } from './get-cap.js';
import { outputBuffers } from './output-cap.js';
import { coalesceWrites } from '../util/coalesce-writes.js';
import { retry } from '../util/wait.js';
import { buildRemoteCommand } from './command-line.js';
import { prepareHostKeyCheck } from './host-key.js';
import { quoteArgv } from './quote.js';
import {
  hasPidPrelude,
  isPosixShell,
  killArgv,
  PidLineFilter,
  type RemotePid,
  shScriptWithPidReport,
  stripPidPrelude,
  withPidPrelude,
} from './remote-pid.js';
import { parseJump } from './jump.js';
import { Semaphore } from '../util/semaphore.js';
import { authConfig, passwordOnlyIfVerified } from './ssh-auth.js';
import { pipedGet, pipedPut, tempNameFor } from './transfer-piped.js';
import { SFTP_UNAVAILABLE_HINT, TransferChoice, type Transport } from './transfer-choice.js';
import type { Connection, ConnectionSpec, ExecOptions, ExecResult, GetOptions, PutOptions } from './types.js';

export interface SshOptions {
  signal?: AbortSignal;
  /** Warnings (host key checking off, new host key recorded). */
  onWarning?: (message: string) => void;
  /** Every remote command line sent (for -v logging; contains no secret env values). */
  onCommand?: (host: string, command: string) => void;
  /** Concurrent channels per connection (OpenSSH's MaxSessions defaults to 10; SFTP needs one). */
  maxChannels?: number;
}

/** SFTP sessions whose channel has closed (their pending requests may never be answered). */
const closedSftp = new WeakSet<SFTPWrapper>();

const LOST_HINT = 'the host went down or the network dropped; the next task reconnects';

export interface Hop {
  label: string;
  address: string;
  port: number;
  user: string;
}

const HANDSHAKE_DROPPED_HINT = 'the host or something in between dropped it (sshd going down, MaxStartups, a firewall); try again';

// Maps ssh2/socket errors to what an operator can act on.
export function describeConnectError(
  err: Error & { code?: string; level?: string },
  hop: Pick<Hop, 'address' | 'port' | 'user'>,
): { message: string; hint: string } {
  const where = `${hop.address}:${hop.port}`;
  if (err.code === 'ECONNREFUSED')
    return { message: `connection refused by ${where}`, hint: 'check that sshd runs there and ssh_port is right' };
  if (err.code === 'EHOSTUNREACH' || err.code === 'ENETUNREACH')
    return { message: `no route to ${where}`, hint: 'check the address and the provisioning network' };
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN')
    return { message: `cannot resolve ${hop.address}`, hint: 'check ssh_host / ansible_host' };
  if (err.code === 'ETIMEDOUT' || /timed out/i.test(err.message))
    return { message: `timed out connecting to ${where}`, hint: 'check that the host is up and reachable; raise the connect timeout if it is slow' };
  // Written to or read from a connection the host had already dropped, mid-handshake.
  if (err.code === 'EPIPE' || err.code === 'ECONNRESET')
    return { message: `${where} closed the connection during the SSH handshake (${err.message})`, hint: HANDSHAKE_DROPPED_HINT };
  if (err.level === 'client-authentication' || /authentication methods failed/i.test(err.message))
    return {
      message: `authentication as ${hop.user} to ${where} failed`,
      hint: 'check ssh_user and that the key (or agent / password) is authorized on the host',
    };
  return { message: `cannot connect to ${where}: ${err.message}`, hint: 'check the host and the network' };
}

export class SshConnection implements Connection {
  readonly host: string;
  private client: Client | undefined;
  private jumps: Client[] = [];
  /** The login shell reported itself as POSIX: it runs the PID prelude itself (see remote-pid.ts). */
  private posixLogin = false;
  private connecting: Promise<Client> | undefined;
  private sftp: Promise<SFTPWrapper> | undefined;
  private readonly inflight = new Set<(err: Error) => void>();
  private readonly channels: Semaphore;
  private closed = false;
  /** SFTP or piped transfer, chosen once per connection (transfer-choice.ts). */
  private readonly transfer: TransferChoice;
  /** Handshakes done so far (1 unless the connection dropped and was re-established). */
  handshakes = 0;

  constructor(
    readonly spec: ConnectionSpec,
    private readonly opts: SshOptions = {},
  ) {
    this.host = spec.host;
    this.channels = new Semaphore(opts.maxChannels ?? 8);
    this.transfer = new TransferChoice(spec.transferMethod ?? 'smart', () => this.getSftp());
  }

  /** How puts and gets travel on this connection, once chosen (sftp or piped). */
  get transport(): Transport | undefined {
    return this.transfer.current;
  }

  /** Connects now (openSsh calls this so an unreachable host fails up front). */
  async connect(signal?: AbortSignal): Promise<Client> {
    if (this.closed) throw new TsbmError('runtime', `connection to ${this.host} is closed`);
    if (this.client) return this.client;
    this.connecting ??= this.dial(signal).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async dial(signal?: AbortSignal): Promise<Client> {
    const spec = this.spec;
    const hops: Hop[] = spec.jump
      ? parseJump(spec.jump).map((j) => ({
          label: `jump host ${j.address}:${j.port}`,
          address: j.address,
          port: j.port,
          user: j.user ?? spec.user,
        }))
      : [];
    hops.push({ label: spec.host, address: spec.address, port: spec.port, user: spec.user });
    const auth = authConfig(spec);
    const jumps: Client[] = [];
    let sock: NodeJS.ReadableStream | undefined;
    try {
      for (const [i, hop] of hops.entries()) {
        const last = i === hops.length - 1;
        const client = await this.dialHop(hop, auth, sock, last, signal);
        if (last) {
          this.jumps = jumps;
          this.adopt(client);
          this.handshakes++;
          return client;
        }
        jumps.push(client);
        const next = hops[i + 1]!;
        sock = await new Promise<ClientChannel>((resolve, reject) =>
          client.forwardOut('127.0.0.1', 0, next.address, next.port, (err, ch) => {
            if (err) {
              reject(
                new UnreachableError(
                  spec.host,
                  `${hop.label} cannot reach ${next.address}:${next.port}: ${err.message}`,
                  err,
                  'check the target address from the jump host, and that it allows TCP forwarding',
                ),
              );
            } else resolve(ch);
          }),
        );
      }
    } catch (e) {
      for (const j of jumps) j.end();
      throw e;
    }
    throw new Error('unreachable: no hops');
  }

  private async dialHop(
    hop: Hop,
    auth: ReturnType<typeof authConfig>,
    sock: NodeJS.ReadableStream | undefined,
    isTarget: boolean,
    signal?: AbortSignal,
  ): Promise<Client> {
    const spec = this.spec;
    const check = await prepareHostKeyCheck({
      host: isTarget ? spec.host : `${spec.host} via ${hop.label}`,
      address: hop.address,
      port: hop.port,
      mode: spec.hostKeyChecking,
      ...(spec.knownHostsFile ? { knownHostsFile: spec.knownHostsFile } : {}),
      ...(isTarget && spec.hostKeyFingerprint ? { pinnedFingerprint: spec.hostKeyFingerprint } : {}),
      ...(this.opts.onWarning ? { onWarning: this.opts.onWarning } : {}),
    });
    const keepalive = spec.keepaliveIntervalMs ?? 15_000;
    let passwordWithheld = false;
    const config: ConnectConfig = {
      host: hop.address,
      port: hop.port,
      username: hop.user,
      readyTimeout: spec.connectTimeoutMs,
      keepaliveInterval: keepalive,
      keepaliveCountMax: 3,
      hostVerifier: check.hostVerifier,
      ...(check.serverHostKey ? { algorithms: { serverHostKey: check.serverHostKey as never } } : {}),
      ...(sock ? { sock: sock as ConnectConfig['sock'] } : {}),
      ...auth,
      authHandler: passwordOnlyIfVerified(auth, check.verified, () => {
        passwordWithheld = true;
      }),
    };
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
        const hk = check.failure();
        reject(hk ? new UnreachableError(spec.host, hk.message, cause, hk.hint) : new UnreachableError(spec.host, message, cause, hint));
      };
      client.once('error', (err: Error & { code?: string; level?: string }) => {
        if (!ready) client.end();
        const d = describeConnectError(err, hop);
        const hint = passwordWithheld
          ? `ssh_password is offered only to a host whose key is verified (ssh_host_key_checking is ${spec.hostKeyChecking}): record its key in known_hosts, pin ssh_host_key_fingerprint, or log in with a key`
          : d.hint;
        fail(err, `${spec.host}: ${d.message}`, hint);
      });
      // A server that drops the TCP connection during the handshake can leave ssh2 with a
      // 'close' and no 'error' (its ready timeout is cleared too): without this the connect, and
      // the task waiting on it, would never end. After an 'error' this reject changes nothing.
      client.once('close', () =>
        fail(
          undefined,
          `${spec.host}: ${hop.address}:${hop.port} closed the connection during the SSH handshake`,
          HANDSHAKE_DROPPED_HINT,
        ),
      );
      client.connect(config);
      // Request/response traffic: with Nagle, a packet written while the previous one is not yet
      // acknowledged waits for the peer's delayed ACK (measured ~5 ms per command round on 20
      // loopback hosts). Applies when the socket connects; a jump channel has no such option.
      client.setNoDelay(true);
      // ssh2 keeps the socket it made in _sock (1.x); batch its per-packet writes when it is there.
      const made = (client as unknown as { _sock?: unknown })._sock;
      if (made instanceof Socket) coalesceWrites(made);
    });
  }

  // Watches a live client: when it drops, everything in flight fails and the next use redials.
  private adopt(client: Client): void {
    this.client = client;
    // Re-established: the server may be another one now (a reboot), so choose the transfer again.
    if (this.handshakes > 0) this.transfer.reset();
    const lost = (why: string) => {
      if (this.client !== client) return;
      this.client = undefined;
      this.sftp = undefined;
      for (const j of this.jumps) j.end();
      this.jumps = [];
      const err = new UnreachableError(
        this.host,
        `connection to ${this.host} (${this.spec.address}:${this.spec.port}) was lost: ${why}`,
        undefined,
        LOST_HINT,
      );
      for (const fail of [...this.inflight]) fail(err);
    };
    client.on('error', (e: Error) => lost(e.message));
    client.on('close', () => lost('closed by the remote side or the network'));
  }

  exec(argv: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
    const { command, stdinPrefix } = buildRemoteCommand(argv, opts);
    const killable = opts.timeout !== undefined || opts.signal !== undefined;
    return this.run(killable ? withPidPrelude(command, this.posixLogin) : command, stdinPrefix, opts);
  }

  execShell(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    const plain = !opts.env && !opts.secretEnv && opts.cwd === undefined && !opts.become;
    if (opts.posixScript && plain) {
      if (this.posixLogin) {
        // The login shell runs the script itself: its PID report names the shell, whose process
        // group holds every step, so a kill still reaches them all.
        const killable = opts.timeout !== undefined || opts.signal !== undefined;
        return this.run(killable ? withPidPrelude(command, true, false) : command, undefined, opts);
      }
      // Not known yet: the script's own sh -c reports the login shell on the way (killable too).
      return this.run(shScriptWithPidReport(command), undefined, opts);
    }
    return this.exec(['sh', '-c', command], opts);
  }

  private async run(command: string, stdinPrefix: string | undefined, opts: ExecOptions): Promise<ExecResult> {
    opts.signal?.throwIfAborted();
    const release = await this.channels.acquire(opts.signal);
    try {
      const client = await this.connect(opts.signal);
      this.opts.onCommand?.(this.host, stripPidPrelude(command));
      return await this.runOn(client, command, stdinPrefix, opts);
    } finally {
      release();
    }
  }

  private runOn(client: Client, command: string, stdinPrefix: string | undefined, opts: ExecOptions): Promise<ExecResult> {
    return new Promise<ExecResult>((resolve, reject) => {
      const { out, err } = outputBuffers(opts);
      let channel: ClientChannel | undefined;
      let exit: { code: number | null; signal?: string } | undefined;
      let settled = false;
      let killing = false;
      let timer: NodeJS.Timeout | undefined;
      let pid: RemotePid | undefined;
      let pidSettled = false;
      const pidWaiters: (() => void)[] = [];
      const pidFilter = new PidLineFilter((p) => {
        pid = p;
        pidSettled = true;
        if (isPosixShell(p?.shell)) this.posixLogin = true;
        for (const w of pidWaiters.splice(0)) w();
      });
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        this.inflight.delete(onLost);
        fn();
      };
      // Kill the remote command for real, then reject: signal request (honoured by some
      // servers), kill by reported PID on a second channel (OpenSSH), then close the channel.
      const killThenReject = async (error: Error) => {
        if (killing || settled) return;
        killing = true;
        if (timer) clearTimeout(timer);
        try {
          channel?.signal('KILL');
        } catch {
          // channel already gone
        }
        if (hasPidPrelude(command)) {
          if (!pidSettled && channel && exit === undefined) {
            await new Promise<void>((r) => {
              pidWaiters.push(r);
              setTimeout(r, 3000).unref();
            });
          }
          if (pid && exit === undefined) await this.killRemote(client, pid, opts.become).catch(() => {});
        }
        channel?.close();
        finish(() => reject(error));
      };
      const onLost = (e: Error) => finish(() => reject(e));
      const onAbort = () => {
        const reason = opts.signal?.reason;
        void killThenReject(
          reason instanceof Error
            ? reason
            : new TsbmError('runtime', `command on ${this.host} was aborted: ${stripPidPrelude(command)}`, { host: this.host }),
        );
      };
      this.inflight.add(onLost);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      if (opts.timeout !== undefined && opts.timeout > 0) {
        timer = setTimeout(() => {
          void killThenReject(
            new TsbmError(
              'runtime',
              `command on ${this.host} timed out after ${opts.timeout} ms and was killed: ${stripPidPrelude(command)}`,
              { host: this.host, hint: 'raise the timeout or find out why the command hangs' },
            ),
          );
        }, opts.timeout);
      }
      // onChannel must run inside ssh2's callback: a fast command's data and exit status can
      // arrive in the same read, before any promise continuation would attach listeners.
      openExecChannel(client, command, (ch) => onChannel(undefined, ch), opts.signal).catch((e: Error) =>
        onChannel(e, undefined),
      );
      const onChannel = (e: Error | undefined, ch: ClientChannel | undefined): void => {
        if (e || !ch) {
          const why = e?.message ?? 'no channel';
          finish(() =>
            reject(new TsbmError('runtime', `cannot start a command on ${this.host}: ${why}`, { host: this.host, cause: e })),
          );
          return;
        }
        channel = ch;
        if (settled) {
          // Timed out or aborted before the channel opened: make sure the command dies anyway.
          ch.stderr.on('data', (d: Buffer) => pidFilter.push(d));
          ch.resume();
          const kill = () => (pid ? this.killRemote(client, pid, opts.become).catch(() => {}) : Promise.resolve());
          if (hasPidPrelude(command)) pidWaiters.push(() => void kill().then(() => ch.close()));
          else ch.close();
          setTimeout(() => ch.close(), 3000).unref();
          return;
        }
        const onErr = (d: Buffer) => {
          if (d.length === 0) return;
          err.push(d);
          opts.onStderr?.(d);
        };
        ch.on('data', (d: Buffer) => {
          out.push(d);
          opts.onStdout?.(d);
        });
        ch.stderr.on('data', (d: Buffer) => onErr(hasPidPrelude(command) ? pidFilter.push(d) : d));
        ch.on('exit', (code: number | null, signal?: string) => {
          exit = { code, ...(signal ? { signal: signal.replace(/^SIG/, '') } : {}) };
        });
        ch.on('error', () => {});
        ch.on('close', () => {
          onErr(pidFilter.flush());
          for (const w of pidWaiters.splice(0)) w();
          if (killing) return;
          finish(() => {
            if (!exit) {
              return reject(
                new UnreachableError(
                  this.host,
                  `connection to ${this.host} was lost while running: ${stripPidPrelude(command)}`,
                  undefined,
                  LOST_HINT,
                ),
              );
            }
            resolve({
              rc: exit.code ?? (exit.signal ? 128 + signalNumber(exit.signal) : -1),
              stdout: out.toString(opts.stdoutEncoding ?? 'utf8'),
              stderr: err.toString('utf8'),
              ...(exit.signal ? { signal: exit.signal } : {}),
            });
          });
        });
        feedStdin(ch, stdinPrefix, opts.stdin);
      };
    });
  }

  // A second channel (outside the channel limit: the first still holds its slot) that kills.
  private killRemote(client: Client, p: RemotePid, become?: { user?: string }): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 5000);
      t.unref();
      client.exec(quoteArgv(killArgv(p, become)), (e, ch) => {
        if (e) {
          clearTimeout(t);
          return resolve();
        }
        ch.resume();
        ch.stderr.resume();
        ch.on('close', () => {
          clearTimeout(t);
          resolve();
        });
        ch.end();
      });
    });
  }

  /** Whether `client` has gone, or goes within a moment (its close may trail a channel's). */
  private lostSoon(client: Client): Promise<boolean> {
    if (this.client !== client) return Promise.resolve(true);
    return new Promise((resolve) => {
      const onClose = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        client.off('close', onClose);
        resolve(this.client !== client);
      }, 250);
      client.once('close', onClose);
    });
  }

  private getSftp(): Promise<SFTPWrapper> {
    this.sftp ??= this.connect().then(
      (client) =>
        new Promise<SFTPWrapper>((resolve, reject) =>
          client.sftp((e, s) => {
            if (e) {
              this.sftp = undefined;
              // A connection dropping under the request shows as "No response from server", or as
              // "Unable to start subsystem" when the channel closed first: ask the connection.
              void this.lostSoon(client).then((lost) => {
                const dropped = lost || /no response from server/i.test(e.message);
                const why = dropped ? `the connection was lost (${e.message})` : e.message;
                // A dropped connection is unreachable, as for exec: idempotent tasks reconnect and retry.
                reject(
                  dropped
                    ? new UnreachableError(this.host, `cannot start SFTP on ${this.host}: ${why}`, undefined, LOST_HINT)
                    : new TsbmError('runtime', `cannot start SFTP on ${this.host}: ${why}`, { host: this.host, hint: SFTP_UNAVAILABLE_HINT }),
                );
              });
              return;
            }
            s.on('close', () => {
              this.sftp = undefined;
              closedSftp.add(s);
            });
            resolve(s);
          }),
        ),
    );
    return this.sftp;
  }

  /**
   * `work` on an SFTP session, failed as unreachable when the session or the connection goes:
   * ssh2 leaves some SFTP requests pending forever when the channel closes under them.
   */
  private whileConnected<T>(sftp: SFTPWrapper, work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const settle = (fn: () => void) => {
        if (done) return;
        done = true;
        this.inflight.delete(onLost);
        sftp.off('close', onClose);
        fn();
      };
      const onLost = (e: Error) => settle(() => reject(e));
      const onClose = () =>
        onLost(new UnreachableError(this.host, `connection to ${this.host} was lost during a file transfer`, undefined, LOST_HINT));
      this.inflight.add(onLost);
      sftp.once('close', onClose);
      if (closedSftp.has(sftp)) onClose();
      work.then(
        (v) => settle(() => resolve(v)),
        (e: unknown) => settle(() => reject(e)),
      );
    });
  }

  async put(data: Buffer | string | Readable, dest: string, opts: PutOptions = {}): Promise<void> {
    const mode = opts.mode ?? 0o644;
    // Under become SFTP would write as the login user: through sudo over an exec channel instead.
    if (opts.become || (await this.transfer.transport()) === 'piped') {
      return pipedPut((a, o) => this.exec(a, o), this.host, data, dest, { mode, ...(opts.become ? { become: opts.become } : {}) });
    }
    const sftp = await this.getSftp();
    // Readers never see a partial file: write a temp name in the same directory, then rename.
    const tmp = tempNameFor(dest);
    const fail = (what: string, e: Error) =>
      new TsbmError('runtime', `cannot ${what} ${dest} on ${this.host}: ${e.message}`, {
        host: this.host,
        hint: 'check that the directory exists and the SSH user may write there',
      });
    try {
      const small = typeof data === 'string' || (Buffer.isBuffer(data) && data.length <= SMALL_PUT_BYTES);
      await this.whileConnected(
        sftp,
        (async () => {
          if (small) await writeSmall(sftp, tmp, Buffer.from(data as string | Buffer), mode, fail);
          else {
            const src = Buffer.isBuffer(data) ? Readable.from([data]) : (data as Readable);
            await pipeline(src, sftp.createWriteStream(tmp, { mode, flags: 'w' }));
            await sftpCall<void>((cb) => sftp.chmod(tmp, mode, cb)).catch((e: Error) => {
              throw fail('set the mode of', e);
            });
          }
          await this.rename(sftp, tmp, dest);
        })(),
      );
    } catch (e) {
      if (e instanceof UnreachableError) throw e; // nothing to clean up over a dead connection
      await this.whileConnected(sftp, sftpCall<void>((cb) => sftp.unlink(tmp, cb))).catch(() => {});
      if (e instanceof TsbmError) throw e;
      throw fail('write', e as Error);
    }
  }

  private async rename(sftp: SFTPWrapper, from: string, to: string): Promise<void> {
    try {
      // OpenSSH: atomic replace via the posix-rename extension.
      await sftpCall<void>((cb) => sftp.ext_openssh_rename(from, to, cb));
      return;
    } catch {
      // not supported: plain RENAME (which may refuse an existing target)
    }
    try {
      await sftpCall<void>((cb) => sftp.rename(from, to, cb));
    } catch {
      await sftpCall<void>((cb) => sftp.unlink(to, cb)).catch(() => {});
      await sftpCall<void>((cb) => sftp.rename(from, to, cb));
    }
  }

  async get(file: string, opts: GetOptions = {}): Promise<Buffer> {
    if (opts.become || (await this.transfer.transport()) === 'piped') {
      return pipedGet((a, o) => this.exec(a, o), this.host, file, { ...(opts.become ? { become: opts.become } : {}), maxBytes: getCap(opts) });
    }
    const sftp = await this.getSftp();
    try {
      return await this.whileConnected(sftp, sftpReadCapped(sftp, this.host, file, getCap(opts)));
    } catch (e) {
      if (e instanceof TsbmError) throw e;
      const code = (e as { code?: number }).code;
      throw new TsbmError('runtime', `cannot read ${file} on ${this.host}: ${code === 2 ? 'no such file' : (e as Error).message}`, {
        host: this.host,
        hint: code === 2 ? 'check the path' : 'check that the SSH user may read the file',
      });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = undefined;
    this.sftp = undefined;
    const err = new TsbmError('runtime', `connection to ${this.host} was closed`);
    for (const fail of [...this.inflight]) fail(err);
    if (c) {
      await new Promise<void>((resolve) => {
        c.once('close', () => resolve());
        c.end();
        setTimeout(resolve, 1000).unref();
      });
    }
    for (const j of this.jumps) j.end();
    this.jumps = [];
  }
}

// A server at its session limit refuses new channels ("open failed"); that is transient.
async function openExecChannel(
  client: Client,
  command: string,
  onOpen: (ch: ClientChannel) => void,
  signal?: AbortSignal,
): Promise<void> {
  await retry(
    () =>
      new Promise<void>((resolve, reject) =>
        client.exec(command, (e, ch) => {
          if (e) return reject(e);
          onOpen(ch);
          resolve();
        }),
      ),
    {
      retries: 5,
      baseDelayMs: 100,
      maxDelayMs: 2000,
      ...(signal ? { signal } : {}),
      retryable: (e) => /open failed|channel open failure/i.test((e as Error).message),
    },
  );
}

function sftpCall<T>(fn: (cb: (err: Error | null | undefined, v?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    try {
      fn((err, v) => (err ? reject(err) : resolve(v as T)));
    } catch (e) {
      reject(e);
    }
  });
}

/** Files up to this size are written with pipelined SFTP requests (see writeSmall). */
const SMALL_PUT_BYTES = 1024 * 1024;
// Under every server's write limit (ssh2 splits a larger WRITE and sends the rest only after
// the first is answered, which would put it behind our CLOSE).
const SFTP_CHUNK = 16 * 1024;

/**
 * Opens, then sends every WRITE, the mode (FSETSTAT: the open's mode is cut by the umask) and
 * the CLOSE without waiting between them: two round trips instead of one per request. An SFTP
 * server answers requests on one handle in order (OpenSSH's sftp-server runs them one by one).
 */
async function writeSmall(
  sftp: SFTPWrapper,
  file: string,
  data: Buffer,
  mode: number,
  fail: (what: string, e: Error) => TsbmError,
): Promise<void> {
  const handle = await sftpCall<Buffer>((cb) => sftp.open(file, 'w', { mode }, cb));
  const writes: Promise<void>[] = [];
  for (let off = 0; off < data.length; off += SFTP_CHUNK) {
    const len = Math.min(SFTP_CHUNK, data.length - off);
    writes.push(sftpCall<void>((cb) => sftp.write(handle, data, off, len, off, cb)));
  }
  const chmod = sftpCall<void>((cb) => sftp.fchmod(handle, mode, cb));
  const close = sftpCall<void>((cb) => sftp.close(handle, cb));
  // Every answer is awaited (none left unhandled); the first failure in request order is reported.
  const settled = await Promise.allSettled([...writes, chmod, close]);
  const i = settled.findIndex((r) => r.status === 'rejected');
  if (i < 0) return;
  const reason = (settled[i] as PromiseRejectedResult).reason as Error;
  throw i === writes.length ? fail('set the mode of', reason) : reason;
}

function feedStdin(ch: ClientChannel, prefix: string | undefined, stdin: ExecOptions['stdin']): void {
  // Nothing to send: EOF on the channel, leaving the Writable to ssh2, which ends it when the
  // channel closes (ending it here too made ssh2 build an ERR_STREAM_ALREADY_FINISHED, stack
  // trace and all, for every command).
  if (prefix === undefined && stdin === undefined) return void ch.eof();
  if (prefix !== undefined) ch.write(prefix);
  if (stdin === undefined) return void ch.end();
  if (typeof stdin === 'string' || Buffer.isBuffer(stdin)) return void ch.end(stdin);
  stdin.on('error', () => ch.end());
  stdin.pipe(ch);
}

const SIGNALS: Record<string, number> = { HUP: 1, INT: 2, QUIT: 3, ABRT: 6, KILL: 9, SEGV: 11, PIPE: 13, ALRM: 14, TERM: 15 };
function signalNumber(name: string): number {
  return SIGNALS[name.replace(/^SIG/, '')] ?? 0;
}

/** Opens (and verifies) an SSH connection; throws UnreachableError when the host cannot be reached. */
export async function openSsh(spec: ConnectionSpec, opts: SshOptions = {}): Promise<SshConnection> {
  const conn = new SshConnection(spec, opts);
  await conn.connect(opts.signal);
  return conn;
}
