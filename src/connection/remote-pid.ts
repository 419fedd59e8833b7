// Killable remote commands. OpenSSH ignores "signal" channel requests in practice and does not
// kill a command when its channel closes, so a command that may need killing (timeout or abort
// signal) starts with a tiny prelude that reports its PID and process group on stderr; the
// client strips that line and, to kill, runs `kill -KILL -PGID` on a second channel.
// The server runs a command line with the user's login shell (`$SHELL -c LINE`). Until that is
// known to be a POSIX shell the prelude is its own `sh -c` (one more process per command), which
// also reports $SHELL; after that the login shell runs the prelude itself.
import { quoteArgv } from '../util/shell-quote.js';

const MARK = 'tsbm-pid';
// Builtins only (no extra process): field 5 of /proc/PID/stat is the process group.
const REPORT = `read -r _ _ _ _ g _ 2>/dev/null </proc/$$/stat; echo "${MARK} $$ $g`;
const SCRIPT = `${REPORT} $SHELL" >&2; exec "$@"`;

/** The exact prefix put in front of the quoted command (servers and loggers can strip it). */
export const PID_PRELUDE = `${quoteArgv(['sh', '-c', SCRIPT, 'sh'])} `;

/** The same for a login shell known to be POSIX: it reports and then execs the command itself. */
export const INLINE_PID_PRELUDE = `${REPORT}" >&2; exec `;

/** Login shells that run the inline prelude as sh would (basename of $SHELL). */
const POSIX_SHELLS = new Set(['sh', 'dash', 'bash', 'ash', 'ksh', 'mksh', 'zsh']);

export function isPosixShell(shell: string | undefined): boolean {
  return shell !== undefined && POSIX_SHELLS.has(shell.slice(shell.lastIndexOf('/') + 1));
}

/** The inline prelude for a script the login shell runs itself (nothing to exec). */
const SCRIPT_PID_PRELUDE = `${REPORT}" >&2; `;

// A script while the login shell is not yet known: its own `sh -c` reports the PID, process group
// and $SHELL before running the script. That is the same one process a bare `sh -c SCRIPT` costs,
// and the commands after it can run inline. REPORT holds no single quote, so the quoted form
// always starts with this exact text.
const SH_SCRIPT_HEAD = `${REPORT} $SHELL" >&2; `;
export const SH_SCRIPT_PID_PRELUDE = `sh -c '${SH_SCRIPT_HEAD}`;

/** `sh -c SCRIPT` (quoted) whose shell first reports itself as the prelude does. */
export function shScriptWithPidReport(script: string): string {
  return quoteArgv(['sh', '-c', SH_SCRIPT_HEAD + script]);
}

/**
 * `command` (a quoted command line) with the prelude in front; `inline` once the login shell is
 * POSIX; `exec: false` when the command is a script for the login shell itself.
 */
export function withPidPrelude(command: string, inline = false, exec = true): string {
  if (!exec) return SCRIPT_PID_PRELUDE + command;
  return (inline ? INLINE_PID_PRELUDE : PID_PRELUDE) + command;
}

/** Whether a command line starts with either prelude (its stderr then begins with the report). */
export function hasPidPrelude(command: string): boolean {
  return (
    command.startsWith(PID_PRELUDE) ||
    command.startsWith(INLINE_PID_PRELUDE) ||
    command.startsWith(SCRIPT_PID_PRELUDE) ||
    command.startsWith(SH_SCRIPT_PID_PRELUDE)
  );
}

/** The command as the caller wrote it (for logs and recorded commands). */
export function stripPidPrelude(command: string): string {
  if (command.startsWith(PID_PRELUDE)) return command.slice(PID_PRELUDE.length);
  if (command.startsWith(INLINE_PID_PRELUDE)) return command.slice(INLINE_PID_PRELUDE.length);
  if (command.startsWith(SCRIPT_PID_PRELUDE)) return command.slice(SCRIPT_PID_PRELUDE.length);
  if (command.startsWith(SH_SCRIPT_PID_PRELUDE)) return `sh -c '${command.slice(SH_SCRIPT_PID_PRELUDE.length)}`;
  return command;
}

export interface RemotePid {
  pid: number;
  pgid?: number;
  /** The login shell ($SHELL), reported by the `sh -c` prelude. */
  shell?: string;
}

/**
 * Filters a stderr stream: the first line, when it is the prelude's report, is taken out and
 * handed to onPid; everything else is passed through unchanged.
 */
export class PidLineFilter {
  private head: Buffer | undefined = Buffer.alloc(0);

  constructor(private readonly onPid: (p: RemotePid | undefined) => void) {}

  push(chunk: Buffer): Buffer {
    if (!this.head) return chunk;
    const buf = Buffer.concat([this.head, chunk]);
    const nl = buf.indexOf(0x0a);
    if (nl < 0) {
      if (buf.length < 512 && MARK.startsWith(buf.toString('latin1').slice(0, MARK.length))) {
        this.head = buf;
        return Buffer.alloc(0);
      }
      return this.done(undefined, buf);
    }
    const m = new RegExp(`^${MARK} (\\d+) ?(\\d*)(?: (.*?))? *$`).exec(buf.subarray(0, nl).toString('latin1'));
    if (!m) return this.done(undefined, buf);
    return this.done(
      { pid: Number(m[1]), ...(m[2] ? { pgid: Number(m[2]) } : {}), ...(m[3] ? { shell: m[3] } : {}) },
      buf.subarray(nl + 1),
    );
  }

  /** Anything still held back (stream ended without a newline). */
  flush(): Buffer {
    const rest = this.head ?? Buffer.alloc(0);
    if (this.head) this.done(undefined, rest);
    return rest;
  }

  private done(p: RemotePid | undefined, rest: Buffer): Buffer {
    this.head = undefined;
    this.onPid(p);
    return rest;
  }
}

// `kill -KILL -PGID` first: dash (Debian's and Ubuntu's /bin/sh) rejects `kill -KILL -- -PGID`
// ("Illegal number"), which left every child of a killed script running. The `--` form stays
// for a shell that would read -PGID as an option; the PID alone is the last resort.
const KILL_GROUP = 'kill -KILL "-$1" 2>/dev/null || kill -KILL -- "-$1" 2>/dev/null || kill -KILL "$2"';

/** argv that kills the reported process group (or just the process) on the remote host. */
export function killArgv(p: RemotePid, become?: { user?: string }): string[] {
  const kill = p.pgid ? ['sh', '-c', KILL_GROUP, 'sh', String(p.pgid), String(p.pid)] : ['kill', '-KILL', String(p.pid)];
  return become ? ['sudo', '-n', '--', ...kill] : kill;
}
