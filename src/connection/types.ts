import type { Readable } from 'node:stream';
import type { TransferMethod } from './transfer-choice.js';

export interface ExecOptions {
  stdin?: string | Buffer | Readable;
  env?: Record<string, string>;
  /**
   * Environment values that must never appear on a command line (passwords, tokens). They
   * travel on stdin ahead of the command's own input; values may not contain newlines.
   * Entries of `env` whose names look secret (see output/redact.ts) are moved here automatically.
   */
  secretEnv?: Record<string, string>;
  /** Milliseconds; on expiry the remote process is killed and the call rejects with a timeout error. */
  timeout?: number;
  signal?: AbortSignal;
  /** Run through `sudo -n` (optionally as another user). */
  become?: { user?: string };
  /** Working directory for the command. */
  cwd?: string;
  /**
   * execShell only: the string is plain POSIX sh that may run in the login shell itself once that
   * is known to be a POSIX shell (one process fewer than `sh -c`). Transports without a login
   * shell ignore it.
   */
  posixScript?: boolean;
  /**
   * How stdout becomes ExecResult.stdout (default utf8). 'latin1' keeps every byte as one
   * character, so binary output (a read-back inside a batch of steps) survives intact.
   */
  stdoutEncoding?: 'utf8' | 'latin1';
  /**
   * Bytes of stdout, and of stderr, kept (default tsbm_max_output's, 16 MiB): past it the first
   * and last halves are kept and a note replaces the middle. Streaming callbacks see everything.
   */
  maxOutputBytes?: number;
  /** Streaming callbacks, e.g. for progress parsing. Full output is still returned. */
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
}

export interface ExecResult {
  rc: number;
  stdout: string;
  stderr: string;
  /** Signal name when the remote process died by a signal. */
  signal?: string;
}

export interface PutOptions {
  mode?: number;
  /** Write as another user (sudo -n) instead of the login user; content goes over stdin. */
  become?: { user?: string };
}

export interface GetOptions {
  /** Read as another user (sudo -n) instead of the login user. */
  become?: { user?: string };
  /** A larger file is refused without reading it whole (default tsbm_max_get's, 64 MiB). */
  maxBytes?: number;
}

/** One transport to one host. Remote commands are argv arrays; quoting lives in util/shell-quote.ts. */
export interface Connection {
  readonly host: string;
  exec(argv: readonly string[], opts?: ExecOptions): Promise<ExecResult>;
  /** Raw shell string: only the `shell` module may call this. */
  execShell(command: string, opts?: ExecOptions): Promise<ExecResult>;
  put(data: Buffer | string | Readable, path: string, opts?: PutOptions): Promise<void>;
  get(path: string, opts?: GetOptions): Promise<Buffer>;
  close(): Promise<void>;
  /**
   * Re-established by itself on its next use after it dropped (SSH): whoever holds it keeps it
   * after a failure rather than opening another.
   */
  readonly redials?: boolean;
}

/** What the executor knows about how to reach a host (resolved from inventory vars). */
export interface ConnectionSpec {
  host: string; // inventory name
  connection: 'ssh' | 'local';
  address: string;
  port: number;
  user: string;
  privateKeyFile?: string;
  /** Name of the environment variable holding the key file's passphrase (never the passphrase itself). */
  privateKeyPassphraseEnv?: string;
  /** ssh-agent socket; default $SSH_AUTH_SOCK when set; false disables the agent. */
  agent?: string | false;
  password?: string;
  knownHostsFile?: string;
  hostKeyFingerprint?: string;
  hostKeyChecking: 'strict' | 'accept-new' | 'off';
  jump?: string;
  connectTimeoutMs: number;
  /** Keepalive interval (default 15000 ms; 0 disables). */
  keepaliveIntervalMs?: number;
  /** How put/get travel: smart (SFTP, else piped over exec; the default), sftp or piped. */
  transferMethod?: TransferMethod;
}

export type ConnectionFactory = (spec: ConnectionSpec, opts?: { signal?: AbortSignal }) => Promise<Connection>;
