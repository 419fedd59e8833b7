// How an SSH connection moves files: SFTP where the server offers it, else over an exec
// channel (transfer-piped.ts). `ssh_transfer_method` (Ansible's name and values) picks it:
// smart tries SFTP once per connection and falls back to piped, remembering the answer;
// sftp and piped force one. A new connection (after a drop or a reboot into another system)
// asks again: the server may be another one.
import { UnreachableError } from '../errors.js';

export const TRANSFER_METHODS = ['smart', 'sftp', 'piped'] as const;
export type TransferMethod = (typeof TRANSFER_METHODS)[number];

/** What a connection actually uses. */
export type Transport = 'sftp' | 'piped';

/** The hint when SFTP cannot start; with smart this never reaches anyone (it falls back). */
export const SFTP_UNAVAILABLE_HINT =
  'ssh_transfer_method is sftp but the server offers no working SFTP subsystem: set ssh_transfer_method: smart (or piped) for this host, or enable SFTP in its sshd (Subsystem sftp ...)';

export class TransferChoice {
  private chosen: Promise<Transport> | undefined;
  private settled: Transport | undefined;

  /** `startSftp` opens (or returns the open) SFTP session; it rejects with UnreachableError when the connection is gone. */
  constructor(
    readonly method: TransferMethod,
    private readonly startSftp: () => Promise<unknown>,
  ) {}

  /** The transport for the next put or get. */
  transport(): Promise<Transport> {
    if (this.method === 'piped') return Promise.resolve('piped');
    // Forced: every transfer needs SFTP, and its failure is the caller's error.
    if (this.method === 'sftp') return this.startSftp().then(() => 'sftp');
    if (!this.chosen) {
      const attempt: Promise<Transport> = this.startSftp().then(
        () => 'sftp' as const,
        (e: unknown) => {
          // A dropped connection says nothing about the server: ask again on the next one.
          if (e instanceof UnreachableError) {
            if (this.chosen === attempt) this.chosen = undefined;
            throw e;
          }
          return 'piped' as const;
        },
      );
      this.chosen = attempt;
      attempt.then(
        (t) => {
          if (this.chosen === attempt) this.settled = t;
        },
        () => {},
      );
    }
    return this.chosen;
  }

  /** What smart settled on for this connection, if it has (tests, logs). */
  get current(): Transport | undefined {
    return this.method === 'smart' ? this.settled : this.method;
  }

  /** The connection was re-established: choose again. */
  reset(): void {
    this.chosen = undefined;
    this.settled = undefined;
  }
}
