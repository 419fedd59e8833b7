// ModuleContext for one task on one host: I/O goes to the host's pooled connection (or the
// controller for controller modules and delegate_to localhost); logs become events.
import type { Readable } from 'node:stream';
import type { Connection, ConnectionFactory, ConnectionSpec, ExecOptions, ExecResult, PutOptions } from '../connection/types.js';
import type { ConnectOverrides, ModuleContext, ProgressUpdate, RunServices } from '../module-api/types.js';
import type { EventBus } from '../output/events.js';
import type { Redactor } from '../output/redact.js';
import { describeSteps, execSteps, type StepsOptions } from '../connection/exec-steps.js';
import { quoteArgv } from '../util/shell-quote.js';
import type { Vars } from '../types.js';
import { type ConnectionPool, localSpec } from './connection-pool.js';
import { type ExecLimits, execLimits, limitedConnection, unwrapLimited, withExecLimits, withGetLimits } from './exec-limits.js';

export interface ContextInit {
  host: string;
  task: string;
  taskId: string;
  vars: Vars;
  check: boolean;
  diff: boolean;
  signal: AbortSignal;
  services: RunServices;
  pool: ConnectionPool;
  /** Opens an unpooled connection (ctx.connect); the module closes it. */
  fresh: ConnectionFactory;
  bus: EventBus;
  redactor: Redactor;
  /** Where exec/put/get go: the host, a delegate, or the controller. */
  target: ConnectionSpec;
  /** The host's own SSH target (for connect()). */
  hostSpec: () => ConnectionSpec;
  /** Defaults merged into every exec (environment, become). */
  execDefaults: Pick<ExecOptions, 'env' | 'secretEnv' | 'become'>;
  startedAt: number;
  /** no_log task: its commands are not logged either. */
  noLog: boolean;
  /** The task has a `timeout:` keyword (so its commands get no default timeout of their own). */
  taskTimeout?: boolean;
}

export function createModuleContext(c: ContextInit): ModuleContext {
  const conn = (): Promise<Connection> => c.pool.get(c.target, c.signal);
  // Read on first use, so a bad value fails the task that uses it, like any other variable.
  let limitsMemo: ExecLimits | undefined;
  const limits = (): ExecLimits => {
    limitsMemo ??= execLimits(c.vars, c.taskTimeout === true);
    return limitsMemo;
  };
  const withDefaults = (opts: ExecOptions | undefined): ExecOptions => {
    const env = c.execDefaults.env || opts?.env ? { ...c.execDefaults.env, ...opts?.env } : undefined;
    const secretEnv =
      c.execDefaults.secretEnv || opts?.secretEnv ? { ...c.execDefaults.secretEnv, ...opts?.secretEnv } : undefined;
    const become = opts?.become ?? c.execDefaults.become;
    return withExecLimits(
      {
        ...opts,
        ...(env ? { env } : {}),
        ...(secretEnv ? { secretEnv } : {}),
        ...(become ? { become } : {}),
        signal: withTaskSignal(opts?.signal, c.signal),
      },
      limits(),
    );
  };
  return {
    host: c.host,
    vars: c.vars,
    check: c.check,
    diff: c.diff,
    signal: c.signal,
    services: c.services,
    task: c.task,
    async exec(argv: readonly string[], opts?: ExecOptions): Promise<ExecResult> {
      logCommand(c, quoteArgv(argv));
      return (await conn()).exec(argv, withDefaults(opts));
    },
    async execSteps(steps: readonly (readonly string[])[], opts?: StepsOptions): Promise<ExecResult[]> {
      // Nothing to run (e.g. no partition to probe): no round trip and no empty `exec:` line.
      if (steps.length === 0) return [];
      logCommand(c, describeSteps(steps));
      const { stdinStep, ...rest } = opts ?? {};
      return execSteps(await conn(), steps, { ...withDefaults(rest), ...(stdinStep !== undefined ? { stdinStep } : {}) });
    },
    async execShell(command: string, opts?: ExecOptions): Promise<ExecResult> {
      logCommand(c, command);
      return (await conn()).execShell(command, withDefaults(opts));
    },
    async put(data: Buffer | string | Readable, path: string, opts?: PutOptions): Promise<void> {
      const become = opts?.become ?? c.execDefaults.become;
      return (await conn()).put(data, path, become ? { ...opts, become } : opts);
    },
    async get(path: string): Promise<Buffer> {
      return (await conn()).get(path, withGetLimits(c.execDefaults.become ? { become: c.execDefaults.become } : undefined, limits()));
    },
    async local(argv: readonly string[], opts?: ExecOptions): Promise<ExecResult> {
      logCommand(c, `(controller) ${quoteArgv(argv)}`);
      const local = await c.pool.get(localSpec(), c.signal);
      return local.exec(argv, { ...opts, signal: withTaskSignal(opts?.signal, c.signal) });
    },
    connect(opts?: ConnectOverrides): Promise<Connection> {
      const spec: ConnectionSpec = {
        ...c.hostSpec(),
        ...(opts?.timeoutMs ? { connectTimeoutMs: opts.timeoutMs } : {}),
        ...(opts?.address ? { address: opts.address } : {}),
        ...(opts?.hostKeyFingerprint ? { hostKeyFingerprint: opts.hostKeyFingerprint } : {}),
      };
      const fresh = c.fresh(spec, { signal: c.signal });
      return fresh.then((conn) => limitedConnection(conn, limits));
    },
    keepConnection(conn: Connection, opts?: { pinned?: boolean }): void {
      const spec = c.hostSpec();
      // A host whose key was not verified (ssh_host_key_checking: off, as for an instance's new
      // keys) is not trusted with later tasks: they connect afresh, with their own checking. A
      // connection pinned to the key a ramdisk reported when it called home was verified.
      if (spec.hostKeyChecking === 'off' && !spec.hostKeyFingerprint && !opts?.pinned) {
        void conn.close().catch(() => undefined);
        return;
      }
      c.pool.adopt(spec, unwrapLimited(conn));
    },
    secret<T extends string>(value: T): T {
      c.redactor.add(value);
      return value;
    },
    log(message: string, level: 1 | 2 | 3 = 1): void {
      c.bus.emit({ type: 'log', time: Date.now(), host: c.host, task: c.task, level, message });
    },
    warn(message: string): void {
      c.bus.emit({ type: 'warning', time: Date.now(), host: c.host, task: c.task, message });
    },
    // Transport retries (a BMC answering 503) are events too, so operators and the journal see them.
    retry(info: { attempt: number; retries: number; message: string }): void {
      c.bus.emit({ type: 'retry', time: Date.now(), host: c.host, task: c.task, taskId: c.taskId, attempt: info.attempt, retries: info.retries, msg: info.message });
    },
    progress(u: ProgressUpdate): void {
      c.bus.emit({
        type: 'progress',
        time: Date.now(),
        host: c.host,
        task: c.task,
        taskId: c.taskId,
        message: u.message,
        ...(u.current !== undefined ? { current: u.current } : {}),
        ...(u.total !== undefined ? { total: u.total } : {}),
        ...(u.unit !== undefined ? { unit: u.unit } : {}),
        elapsedMs: Date.now() - c.startedAt,
      });
    },
  };
}

/** Commands show at -vvv (the bus redacts; secret env never is part of the command). */
/**
 * The task's signal, joined with the caller's own when it has one. Modules mostly pass
 * ctx.signal itself, which needs no joining (AbortSignal.any is costly per command).
 */
function withTaskSignal(own: AbortSignal | undefined, task: AbortSignal): AbortSignal {
  return own && own !== task ? AbortSignal.any([own, task]) : task;
}

function logCommand(c: ContextInit, command: string): void {
  if (c.noLog) return;
  c.bus.emit({ type: 'log', time: Date.now(), host: c.host, task: c.task, level: 3, message: `exec: ${command}` });
}
