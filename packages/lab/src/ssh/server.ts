// A reusable in-process SSH server speaking the real protocol (ssh2's Server): publickey and
// password auth, exec with exit status/signal, env and signal requests, SFTP on the real file
// system, and direct-tcpip forwarding (so it can act as a jump host). The simulated lab and
// the integration tests run their "hosts" on it.
import net from 'node:net';
import type { AuthContext, ParsedKey, ServerChannel, Session } from 'ssh2';
import { Server, utils } from 'tsbm/lib/connection/ssh2-lib.js';
import { sha256Fingerprint } from 'tsbm/lib/connection/fingerprint.js';
import { stripPidPrelude } from 'tsbm/lib/connection/remote-pid.js';
import { coalesceWrites } from 'tsbm/lib/util/coalesce-writes.js';
import { type SshExecHandler, type SshExecProcess, shellExecHandler } from './exec.js';
import { serveSftp } from './sftp.js';

export type { SshExecHandler, SshExecProcess, SshExecSession } from './exec.js';
export { shellExecHandler } from './exec.js';

export interface SshServerOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Private host keys (OpenSSH or PEM). */
  hostKeys: (Buffer | string)[];
  /** Public keys (OpenSSH `type base64 [comment]` lines) allowed to log in as any user. */
  authorizedKeys: (Buffer | string)[];
  allowPassword?: { user: string; password: string };
  /** Runs one exec request; default: `sh -c COMMAND` on this machine. */
  exec?: SshExecHandler;
  /** Directory the SFTP `/` maps to (default '/'). */
  sftpRoot?: string;
  /** Where relative SFTP paths point (default '/'). */
  sftpHome?: string;
  /**
   * false: refuse the sftp subsystem, as a server without one does (default true). 'exit127':
   * accept it, then end the channel with status 127 before any SFTP reply, as dropbear does
   * when its sftp-server binary is missing.
   */
  sftp?: boolean | 'exit127';
  /** Called with every exec command received (tests record remote command lines; tsbm's PID prelude is stripped). */
  onCommand?: (command: string) => void;
  /** Fault knob: cut the TCP connection right after the Nth exec request has started. */
  dropAfter?: number;
  /** Refuse session channels beyond this many open at once per connection (like OpenSSH's MaxSessions). */
  maxSessions?: number;
  /** false: open no listener; connections come through the handle's accept(). Default true. */
  listen?: boolean;
  /** Allow direct-tcpip (jump host use). Default true. */
  allowForwarding?: boolean;
}

export interface SshServerHandle {
  port: number;
  host: string;
  hostKeyFingerprint: string;
  /** Number of SSH connections (handshakes) accepted so far. */
  readonly connections: number;
  /** Number of exec requests received so far. */
  readonly execs: number;
  /** Number of sftp subsystem requests received so far (refused ones too). */
  readonly sftpRequests: number;
  /** Abruptly cut every open TCP connection (a "network drop"). */
  dropConnections(): void;
  /** Serve a TCP connection accepted elsewhere (a simulated node keeps its own listener). */
  accept(socket: net.Socket): void;
  close(): Promise<void>;
}

function parsePublic(k: Buffer | string): ParsedKey {
  const parsed = utils.parseKey(k);
  if (parsed instanceof Error) throw new Error(`cannot parse key: ${parsed.message}`);
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (!key) throw new Error('empty key');
  return key;
}

function checkAuth(ctx: AuthContext, keys: ParsedKey[], opts: SshServerOptions): boolean {
  if (ctx.method === 'password') {
    const p = opts.allowPassword;
    return !!p && ctx.username === p.user && ctx.password === p.password;
  }
  if (ctx.method !== 'publickey') return false;
  const key = keys.find((k) => ctx.key.algo === k.type && ctx.key.data.equals(k.getPublicSSH()));
  if (!key) return false;
  // Without a signature the client only asks whether the key would be accepted.
  if (!ctx.signature || !ctx.blob) return true;
  return key.verify(ctx.blob, ctx.signature, ctx.hashAlgo);
}

export async function startSshServer(opts: SshServerOptions): Promise<SshServerHandle> {
  const host = opts.host ?? '127.0.0.1';
  const keys = opts.authorizedKeys.map(parsePublic);
  const hostKey = utils.parseKey(opts.hostKeys[0] ?? '');
  if (hostKey instanceof Error) throw new Error(`cannot parse host key: ${hostKey.message}`);
  const firstHostKey = Array.isArray(hostKey) ? hostKey[0] : hostKey;
  if (!firstHostKey) throw new Error('no host key');
  const hostKeyFingerprint = sha256Fingerprint(firstHostKey.getPublicSSH());
  const runExec = opts.exec ?? shellExecHandler();
  const sockets = new Set<net.Socket>();
  const children = new Set<SshExecProcess>();
  let connections = 0;
  let execs = 0;
  let sftpRequests = 0;

  const ssh = new Server({ hostKeys: opts.hostKeys }, (client) => {
    connections++;
    let user = '';
    client.on('authentication', (ctx) => {
      if (checkAuth(ctx, keys, opts)) {
        user = ctx.username;
        ctx.accept();
      } else ctx.reject(opts.allowPassword ? ['publickey', 'password'] : ['publickey']);
    });
    client.on('error', () => {});
    client.on('ready', () => {
      let open = 0;
      client.on('session', (accept, reject) => {
        if (opts.maxSessions !== undefined && open >= opts.maxSessions) return reject();
        open++;
        const session = accept();
        session.once('close', () => open--);
        handleSession(session, () => user);
      });
      client.on('tcpip', (accept, reject, info) => {
        if (opts.allowForwarding === false) return reject();
        const out = net.connect(info.destPort, info.destIP);
        out.once('error', () => reject());
        out.once('connect', () => {
          const ch = accept();
          out.removeAllListeners('error');
          out.on('error', () => ch.destroy());
          ch.on('error', () => out.destroy());
          ch.pipe(out).pipe(ch);
        });
      });
    });
  });

  function handleSession(session: Session, userOf: () => string): void {
    const env: Record<string, string> = {};
    let child: SshExecProcess | undefined;
    session.on('env', (accept, _reject, info) => {
      env[info.key] = info.val;
      accept?.();
    });
    session.on('signal', (accept, _reject, info) => {
      accept?.();
      child?.kill(`SIG${info.name.replace(/^SIG/, '')}` as NodeJS.Signals);
    });
    if (opts.sftp === 'exit127') {
      // With no 'sftp' listener ssh2 hands the request over as a plain subsystem channel.
      session.on('subsystem', (accept, reject, info) => {
        if (info.name !== 'sftp') return reject();
        sftpRequests++;
        const ch = accept();
        ch.stderr.write('sh: 1: /usr/libexec/sftp-server: not found\n');
        ch.exit(127);
        ch.end();
      });
    } else {
      session.on('sftp', (accept, reject) => {
        sftpRequests++;
        if (opts.sftp === false) return reject();
        serveSftp(accept(), { root: opts.sftpRoot ?? '/', home: opts.sftpHome ?? '/' });
      });
    }
    session.on('exec', (accept, _reject, info) => {
      const stream = accept();
      execs++;
      opts.onCommand?.(stripPidPrelude(info.command));
      let proc: SshExecProcess;
      try {
        proc = runExec(info.command, { env: { ...env }, user: userOf() });
      } catch (e) {
        stream.stderr.write(`exec failed: ${(e as Error).message}\n`);
        stream.exit(127);
        stream.end();
        return;
      }
      child = proc;
      children.add(proc);
      wire(stream, proc);
      if (opts.dropAfter !== undefined && execs >= opts.dropAfter) {
        setTimeout(() => dropAll(), 50);
      }
    });
  }

  function wire(stream: ServerChannel, proc: SshExecProcess): void {
    let done = false;
    if (proc.stdin) {
      stream.pipe(proc.stdin);
      proc.stdin.on('error', () => {});
    }
    proc.stdout?.on('data', (d: Buffer) => stream.write(d));
    proc.stderr?.on('data', (d: Buffer) => stream.stderr.write(d));
    // The client went away (closed the channel or the connection): the command must not linger.
    stream.on('close', () => {
      if (!done) proc.kill('SIGKILL');
    });
    stream.on('error', () => {});
    proc.once('error', (err) => {
      if (done) return;
      done = true;
      children.delete(proc);
      stream.stderr.write(`${err.message}\n`);
      stream.exit(127);
      stream.end();
    });
    proc.once('close', (code, signal) => {
      if (done) return;
      done = true;
      children.delete(proc);
      if (signal) stream.exit(signal.replace(/^SIG/, ''), false, '');
      else stream.exit(code ?? 0);
      stream.end();
    });
  }

  function dropAll(): void {
    for (const s of sockets) s.destroy();
  }

  const accept = (sock: net.Socket) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    sock.on('error', () => {});
    coalesceWrites(sock);
    ssh.injectSocket(sock);
  };
  const tcp = opts.listen === false ? undefined : net.createServer(accept);
  if (tcp) {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(opts.port ?? 0, host, () => resolve());
    });
  }
  const addr = tcp?.address() as net.AddressInfo | undefined;

  return {
    port: addr?.port ?? opts.port ?? 0,
    accept,
    host,
    hostKeyFingerprint,
    get connections() {
      return connections;
    },
    get execs() {
      return execs;
    },
    get sftpRequests() {
      return sftpRequests;
    },
    dropConnections: dropAll,
    async close() {
      for (const c of children) c.kill('SIGKILL');
      dropAll();
      if (tcp) await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}
