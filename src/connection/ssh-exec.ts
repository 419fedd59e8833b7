// One remote command on an SSH channel: output collected (capped, output-cap.ts), stdin fed,
// the exit status or signal read, and a timeout or abort that kills the command for real
// (signal request, then a kill by the PID the command reported: remote-pid.ts).
import type { ClientChannel } from 'ssh2';
import { TsbmError, UnreachableError } from '../errors.js';
import { retry } from '../util/wait.js';
import { outputBuffers } from './output-cap.js';
import { quoteArgv } from '../util/shell-quote.js';
import { hasPidPrelude, isPosixShell, killArgv, PidLineFilter, type RemotePid, stripPidPrelude } from './remote-pid.js';
import { type Inflight, LOST_HINT } from './ssh-link.js';
import type { Client } from './ssh2-lib.js';
import type { ExecOptions, ExecResult } from './types.js';

/** Where a command runs: the connection's live client and what it shares with its other uses. */
export interface ExecTarget {
  host: string;
  client: Client;
  inflight: Inflight;
  /** The login shell reported itself as POSIX (it may then run the PID prelude itself). */
  onPosixLogin(): void;
}

/** Runs `command` (stdinPrefix first on its stdin) on a channel of `t.client`. */
export function execOnChannel(t: ExecTarget, command: string, stdinPrefix: string | undefined, opts: ExecOptions): Promise<ExecResult> {
  return new Promise<ExecResult>((resolve, reject) => new ChannelRun(t, command, stdinPrefix, opts, resolve, reject).start());
}

class ChannelRun {
  private readonly out: ReturnType<typeof outputBuffers>['out'];
  private readonly err: ReturnType<typeof outputBuffers>['err'];
  private channel: ClientChannel | undefined;
  private exit: { code: number | null; signal?: string } | undefined;
  private settled = false;
  private killing = false;
  private timer: NodeJS.Timeout | undefined;
  private pid: RemotePid | undefined;
  private pidSettled = false;
  private readonly pidWaiters: (() => void)[] = [];
  private readonly pidFilter: PidLineFilter;
  /** The command reports its PID on stderr first (remote-pid.ts). */
  private readonly reportsPid: boolean;

  constructor(
    private readonly t: ExecTarget,
    private readonly command: string,
    private readonly stdinPrefix: string | undefined,
    private readonly opts: ExecOptions,
    private readonly resolve: (r: ExecResult) => void,
    private readonly reject: (e: Error) => void,
  ) {
    ({ out: this.out, err: this.err } = outputBuffers(opts));
    this.reportsPid = hasPidPrelude(command);
    this.pidFilter = new PidLineFilter((p) => {
      this.pid = p;
      this.pidSettled = true;
      if (isPosixShell(p?.shell)) t.onPosixLogin();
      for (const w of this.pidWaiters.splice(0)) w();
    });
  }

  start(): void {
    const { opts } = this;
    this.t.inflight.add(this.onLost);
    opts.signal?.addEventListener('abort', this.onAbort, { once: true });
    if (opts.timeout !== undefined && opts.timeout > 0) {
      this.timer = setTimeout(() => {
        void this.killThenReject(
          new TsbmError('runtime', `command on ${this.t.host} timed out after ${opts.timeout} ms and was killed: ${this.shown()}`, {
            host: this.t.host,
            hint: 'raise the timeout or find out why the command hangs',
          }),
        );
      }, opts.timeout);
    }
    // onChannel must run inside ssh2's callback: a fast command's data and exit status can
    // arrive in the same read, before any promise continuation would attach listeners.
    openExecChannel(this.t.client, this.command, (ch) => this.onChannel(ch), opts.signal).catch((e: Error) => {
      this.finish(() =>
        this.reject(new TsbmError('runtime', `cannot start a command on ${this.t.host}: ${e.message}`, { host: this.t.host, cause: e })),
      );
    });
  }

  private shown(): string {
    return stripPidPrelude(this.command);
  }

  private finish(fn: () => void): void {
    if (this.settled) return;
    this.settled = true;
    if (this.timer) clearTimeout(this.timer);
    this.opts.signal?.removeEventListener('abort', this.onAbort);
    this.t.inflight.delete(this.onLost);
    fn();
  }

  private readonly onLost = (e: Error): void => this.finish(() => this.reject(e));

  private readonly onAbort = (): void => {
    const reason = this.opts.signal?.reason;
    void this.killThenReject(
      reason instanceof Error
        ? reason
        : new TsbmError('runtime', `command on ${this.t.host} was aborted: ${this.shown()}`, { host: this.t.host }),
    );
  };

  // Kill the remote command for real, then reject: signal request (honoured by some
  // servers), kill by reported PID on a second channel (OpenSSH), then close the channel.
  private async killThenReject(error: Error): Promise<void> {
    if (this.killing || this.settled) return;
    this.killing = true;
    if (this.timer) clearTimeout(this.timer);
    try {
      this.channel?.signal('KILL');
    } catch {
      // channel already gone
    }
    if (this.reportsPid) {
      if (!this.pidSettled && this.channel && this.exit === undefined) {
        await new Promise<void>((r) => {
          this.pidWaiters.push(r);
          setTimeout(r, 3000).unref();
        });
      }
      if (this.pid && this.exit === undefined) await killRemote(this.t.client, this.pid, this.opts.become).catch(() => {});
    }
    this.channel?.close();
    this.finish(() => this.reject(error));
  }

  private onChannel(ch: ClientChannel): void {
    this.channel = ch;
    if (this.settled) {
      this.killLate(ch);
      return;
    }
    const { opts } = this;
    const onErr = (d: Buffer) => {
      if (d.length === 0) return;
      this.err.push(d);
      opts.onStderr?.(d);
    };
    ch.on('data', (d: Buffer) => {
      this.out.push(d);
      opts.onStdout?.(d);
    });
    ch.stderr.on('data', (d: Buffer) => onErr(this.reportsPid ? this.pidFilter.push(d) : d));
    ch.on('exit', (code: number | null, signal?: string) => {
      this.exit = { code, ...(signal ? { signal: signal.replace(/^SIG/, '') } : {}) };
    });
    ch.on('error', () => {});
    ch.on('close', () => {
      onErr(this.pidFilter.flush());
      for (const w of this.pidWaiters.splice(0)) w();
      if (!this.killing) this.finish(() => this.settle());
    });
    feedStdin(ch, this.stdinPrefix, opts.stdin);
  }

  // Timed out or aborted before the channel opened: make sure the command dies anyway.
  private killLate(ch: ClientChannel): void {
    ch.stderr.on('data', (d: Buffer) => this.pidFilter.push(d));
    ch.resume();
    const kill = () => (this.pid ? killRemote(this.t.client, this.pid, this.opts.become).catch(() => {}) : Promise.resolve());
    if (this.reportsPid) this.pidWaiters.push(() => void kill().then(() => ch.close()));
    else ch.close();
    setTimeout(() => ch.close(), 3000).unref();
  }

  /** The channel closed: its exit status, or a lost connection when there was none. */
  private settle(): void {
    const { exit } = this;
    if (!exit) {
      this.reject(
        new UnreachableError(this.t.host, `connection to ${this.t.host} was lost while running: ${this.shown()}`, undefined, LOST_HINT),
      );
      return;
    }
    this.resolve({
      rc: exit.code ?? (exit.signal ? 128 + signalNumber(exit.signal) : -1),
      stdout: this.out.toString(this.opts.stdoutEncoding ?? 'utf8'),
      stderr: this.err.toString('utf8'),
      ...(exit.signal ? { signal: exit.signal } : {}),
    });
  }
}

// A second channel (outside the channel limit: the first still holds its slot) that kills.
function killRemote(client: Client, p: RemotePid, become?: { user?: string }): Promise<void> {
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
