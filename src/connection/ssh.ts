// SSH connection over ssh2: one TCP connection per host reused for every exec (each exec is a
// channel), one SFTP session reused for put/get (piped over exec where the server has no SFTP:
// transfer-choice.ts), host keys verified, optional jump chain. The parts live next door:
// dialing (ssh-dial.ts), a command (ssh-exec.ts), files (ssh-sftp.ts, transfer-piped.ts), the
// client's life (ssh-link.ts). A dropped connection rejects what is in flight and is
// re-established on next use.
import type { Readable } from 'node:stream';
import type { SFTPWrapper } from 'ssh2';
import { TsbmError, UnreachableError } from '../errors.js';
import { Semaphore } from '../util/semaphore.js';
import { buildRemoteCommand } from './command-line.js';
import { getCap } from './get-cap.js';
import { shScriptWithPidReport, stripPidPrelude, withPidPrelude } from './remote-pid.js';
import { dial } from './ssh-dial.js';
import { execOnChannel } from './ssh-exec.js';
import { endClient, failInflight, type Inflight, LOST_HINT, lostSoon, onClientLost } from './ssh-link.js';
import { openSftp, sftpGet, sftpPut } from './ssh-sftp.js';
import type { Client } from './ssh2-lib.js';
import { TransferChoice, type Transport } from './transfer-choice.js';
import { pipedGet, pipedPut } from './transfer-piped.js';
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

export class SshConnection implements Connection {
  readonly host: string;
  readonly redials = true;
  private client: Client | undefined;
  private jumps: Client[] = [];
  /** The login shell reported itself as POSIX: it runs the PID prelude itself (see remote-pid.ts). */
  private posixLogin = false;
  private connecting: Promise<Client> | undefined;
  private sftp: Promise<SFTPWrapper> | undefined;
  private readonly inflight: Inflight = new Set();
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
    this.connecting ??= dial(this.spec, { signal, onWarning: this.opts.onWarning })
      .then(({ client, jumps }) => {
        this.jumps = jumps;
        this.adopt(client);
        this.handshakes++;
        return client;
      })
      .finally(() => {
        this.connecting = undefined;
      });
    return this.connecting;
  }

  // Watches a live client: when it drops, everything in flight fails and the next use redials.
  private adopt(client: Client): void {
    this.client = client;
    // Re-established: the server may be another one now (a reboot), so choose the transfer again.
    if (this.handshakes > 0) this.transfer.reset();
    onClientLost(client, (why) => {
      if (this.client !== client) return;
      this.client = undefined;
      this.sftp = undefined;
      for (const j of this.jumps) j.end();
      this.jumps = [];
      const where = `${this.spec.address}:${this.spec.port}`;
      failInflight(this.inflight, new UnreachableError(this.host, `connection to ${this.host} (${where}) was lost: ${why}`, undefined, LOST_HINT));
    });
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
      const target = {
        host: this.host,
        client,
        inflight: this.inflight,
        onPosixLogin: () => {
          this.posixLogin = true;
        },
      };
      return await execOnChannel(target, command, stdinPrefix, opts);
    } finally {
      release();
    }
  }

  private getSftp(): Promise<SFTPWrapper> {
    this.sftp ??= this.connect().then((client) =>
      openSftp(
        client,
        this.host,
        () => lostSoon(client, () => this.client === client),
        () => {
          this.sftp = undefined;
        },
      ),
    );
    return this.sftp;
  }

  async put(data: Buffer | string | Readable, dest: string, opts: PutOptions = {}): Promise<void> {
    const mode = opts.mode ?? 0o644;
    // Under become SFTP would write as the login user: through sudo over an exec channel instead.
    if (opts.become || (await this.transfer.transport()) === 'piped') {
      return pipedPut((a, o) => this.exec(a, o), this.host, data, dest, { mode, ...(opts.become ? { become: opts.become } : {}) });
    }
    const sftp = await this.getSftp();
    return sftpPut({ sftp, host: this.host, inflight: this.inflight }, data, dest, mode);
  }

  async get(file: string, opts: GetOptions = {}): Promise<Buffer> {
    if (opts.become || (await this.transfer.transport()) === 'piped') {
      return pipedGet((a, o) => this.exec(a, o), this.host, file, { ...(opts.become ? { become: opts.become } : {}), maxBytes: getCap(opts) });
    }
    const sftp = await this.getSftp();
    return sftpGet({ sftp, host: this.host, inflight: this.inflight }, file, getCap(opts));
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = undefined;
    this.sftp = undefined;
    failInflight(this.inflight, new TsbmError('runtime', `connection to ${this.host} was closed`));
    if (c) await endClient(c);
    for (const j of this.jumps) j.end();
    this.jumps = [];
  }
}

/** Opens (and verifies) an SSH connection; throws UnreachableError when the host cannot be reached. */
export async function openSsh(spec: ConnectionSpec, opts: SshOptions = {}): Promise<SshConnection> {
  const conn = new SshConnection(spec, opts);
  await conn.connect(opts.signal);
  return conn;
}
