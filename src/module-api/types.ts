// The module API: what a module is (ModuleDef) and what it gets to work with (ModuleContext,
// RunServices). It sits below deploy/ so the helpers modules share (deploy/, redfish/, http/,
// configdrive/) can take a context without importing the module layer above them.
import type { Static, TSchema } from '@sinclair/typebox';
import type { StepsOptions } from '../connection/exec-steps.js';
import type { Connection, ExecOptions, ExecResult, PutOptions } from '../connection/types.js';
import type { Readable } from 'node:stream';
import type { Vars } from '../types.js';

/** Where a module's run() executes its work. */
type RunsOn = 'controller' | 'target';

export interface ProgressUpdate {
  message: string;
  current?: number;
  total?: number;
  unit?: string; // e.g. 'bytes'
}

/** Run-wide services the executor provides to modules (lazily created, shared per run). */
export interface RunServices {
  /** Directory of the playbook being run (relative `src`/`file` paths resolve against it). */
  playbookDir: string;
  /** Controller-side scratch directory for this run. */
  tmpDir: string;
  /** Anything else a subsystem registers (redfish client pool, HTTP file server, ...), by key. */
  get<T>(key: string, create: () => T): T;
  /** Registers cleanup to run when the run ends (servers stopped, sessions logged out). */
  onClose(fn: () => Promise<void> | void): void;
}

/** ctx.connect's options: a shorter timeout; an address and a pinned host key a ramdisk reported when it called home. */
export interface ConnectOverrides {
  timeoutMs?: number;
  address?: string;
  hostKeyFingerprint?: string;
}

export interface ModuleContext {
  /** Inventory name of the host the task is for. */
  readonly host: string;
  /** The host's variables as the task sees them (templated lazily by the executor). */
  readonly vars: Vars;
  readonly check: boolean;
  readonly diff: boolean;
  readonly signal: AbortSignal;
  readonly services: RunServices;
  /** The task's name, for error messages. */
  readonly task: string;

  /** Run argv on the task's target (or the controller for controller modules / delegate_to localhost). */
  exec(argv: readonly string[], opts?: ExecOptions): Promise<ExecResult>;
  /**
   * Several argv commands in one round trip (one remote process start, one channel), one
   * result per step, in order; a program that cannot start is its step's rc 127.
   */
  execSteps(steps: readonly (readonly string[])[], opts?: StepsOptions): Promise<ExecResult[]>;
  /** Raw shell command; only the `shell` module uses this. */
  execShell(command: string, opts?: ExecOptions): Promise<ExecResult>;
  put(data: Buffer | string | Readable, path: string, opts?: PutOptions): Promise<void>;
  get(path: string): Promise<Buffer>;
  /** Run argv on the controller, whatever the task's target is. */
  local(argv: readonly string[], opts?: ExecOptions): Promise<ExecResult>;
  /** A fresh attempt to connect to the host's SSH target (for wait_agent-style modules). */
  connect(opts?: ConnectOverrides): Promise<Connection>;
  /**
   * Hands a connection from connect() to the run: later tasks on this host use it instead of
   * dialling again (saves a handshake per host; a fleet's worth at once). The run closes it.
   * A connection to a host whose key was not verified (ssh_host_key_checking: off) is closed
   * instead: later tasks connect with their own checking.
   */
  keepConnection?(conn: Connection, opts?: { pinned?: boolean }): void;

  /** Registers a value for redaction everywhere; returns it unchanged. */
  secret<T extends string>(value: T): T;
  log(message: string, level?: 1 | 2 | 3): void;
  warn(message: string): void;
  progress(update: ProgressUpdate): void;
  /** Reports a retry inside the module (e.g. a BMC answering 503) as a `retry` event; optional, else use log(). */
  retry?(info: { attempt: number; retries: number; message: string }): void;
}

export interface ModuleResult {
  changed: boolean;
  failed?: boolean;
  skipped?: boolean;
  msg?: string;
  diff?: { before: string; after: string; path?: string };
  /** Anything else is registered with the result (and facts when under `ansible_facts`/`facts`). */
  [key: string]: unknown;
}

export interface ModuleDef<S extends TSchema = TSchema> {
  name: string;
  /** One line for `tsbm modules`. */
  summary: string;
  description?: string;
  runsOn: RunsOn;
  /** Argument schema: validation, `tsbm modules NAME` docs and schemas/modules/NAME.json come from it. */
  args: S;
  /** Whether run() honours ctx.check (else the executor skips the task in --check with a note). */
  checkMode: boolean;
  /** Safe to run again after a dropped connection (the executor may reconnect and retry once). */
  idempotent?: boolean;
  /**
   * false for a module that only looks (checks, waits, facts) or does nothing to a node at all:
   * the first Ctrl-C stops it at once, and it is no step that changes the node (before those a
   * run checks it still holds the node, and a deploy's node record moves to deploying).
   * Default true: a module that may change its node (power, media, boot, disks, files, commands).
   */
  changesNode?: boolean;
  /** false for executor actions (meta): their results stay out of the recap, as in Ansible. */
  counted?: boolean;
  /** A YAML task snippet shown in docs. */
  example: string;
  /** Free-form (non-mapping) argument form, e.g. `command: ls -l`: key the string is stored under. */
  freeForm?: string;
  run(ctx: ModuleContext, args: Static<S>): Promise<ModuleResult>;
}

/** Helper so module files get typed args without repeating generics. */
export function defineModule<S extends TSchema>(def: ModuleDef<S>): ModuleDef<S> {
  return def;
}
