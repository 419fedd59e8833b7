// The bounds every remote command and file read of a task gets unless the module sets its own:
// output kept (tsbm_max_output), file size (tsbm_max_get), and a timeout (tsbm_command_timeout)
// when the task has no `timeout:` of its own (that one then bounds the whole task instead).
import type { Connection, ExecOptions, GetOptions } from '../connection/types.js';
import { limitFromVars } from '../util/limits.js';

export interface ExecLimits {
  outputBytes: number;
  getBytes: number;
  /** Undefined when the task's `timeout:` is what bounds its commands. */
  commandTimeoutMs: number | undefined;
}

export function execLimits(vars: Record<string, unknown>, taskHasTimeout: boolean): ExecLimits {
  return {
    outputBytes: limitFromVars(vars, 'outputBytes'),
    getBytes: limitFromVars(vars, 'getBytes'),
    commandTimeoutMs: taskHasTimeout ? undefined : limitFromVars(vars, 'commandTimeoutMs'),
  };
}

export function withExecLimits(opts: ExecOptions, l: ExecLimits): ExecOptions {
  return {
    ...opts,
    maxOutputBytes: opts.maxOutputBytes ?? l.outputBytes,
    ...(opts.timeout === undefined && l.commandTimeoutMs !== undefined ? { timeout: l.commandTimeoutMs } : {}),
  };
}

export function withGetLimits(opts: GetOptions | undefined, l: ExecLimits): GetOptions {
  return { ...opts, maxBytes: opts?.maxBytes ?? l.getBytes };
}

const inner = new WeakMap<Connection, Connection>();

/** The connection limitedConnection wrapped (a kept connection serves later tasks with their own bounds). */
export function unwrapLimited(conn: Connection): Connection {
  return inner.get(conn) ?? conn;
}

/** A connection a module opened itself (ctx.connect), held to the same bounds. */
export function limitedConnection(conn: Connection, limits: () => ExecLimits): Connection {
  const wrapped: Connection = {
    host: conn.host,
    exec: (argv, o) => conn.exec(argv, withExecLimits(o ?? {}, limits())),
    execShell: (command, o) => conn.execShell(command, withExecLimits(o ?? {}, limits())),
    put: (data, path, o) => conn.put(data, path, o),
    get: (path, o) => conn.get(path, withGetLimits(o, limits())),
    close: () => conn.close(),
  };
  inner.set(wrapped, conn);
  return wrapped;
}
