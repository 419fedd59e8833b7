// What an exec handler of the in-process SSH server returns (a child process or something like one).
import type { Readable, Writable } from 'node:stream';

/** What an exec handler returns: a ChildProcess satisfies it, so can a scripted fake. */
export interface SshExecProcess {
  stdin: Writable | null;
  stdout: Readable | null;
  stderr: Readable | null;
  kill(signal?: NodeJS.Signals): boolean;
  once(event: 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
  once(event: 'error', listener: (err: Error) => void): this;
}
