// The typed playbook model the loader produces and the executor runs. Every node keeps its
// source position so any error (schema, template, runtime) can name file:line:col.
import type { SourcePos } from '../errors.js';
import type { Vars } from '../types.js';

/** A template-able value with where it came from. Strings stay raw until the executor renders them. */
export interface Expr {
  expr: string;
  pos: SourcePos;
}

export interface RoleContext {
  name: string;
  path: string; // roles/NAME directory
  defaults: Vars; // lowest precedence
  vars: Vars; // above block vars? no: Ansible puts role vars above play vars_files, below block vars
}

/** Keywords shared by tasks and blocks (Ansible inherits them play -> block -> task). */
export interface TaskKeywords {
  name?: string;
  pos: SourcePos;
  /** Positions of individual keys, for precise errors (e.g. keyPos.when). */
  keyPos: Record<string, SourcePos>;
  when: Expr[];
  tags: string[];
  vars: Vars;
  become?: boolean;
  becomeUser?: string;
  environment?: Record<string, unknown> | string;
  noLog?: boolean | string;
  ignoreErrors?: boolean | string;
  ignoreUnreachable?: boolean;
  delegateTo?: string;
  runOnce?: boolean;
  /** Seconds. */
  timeout?: number;
  /** A boolean, or a condition evaluated with a failed host's variables (`"eq on_failure 'stop'"`). */
  anyErrorsFatal?: boolean | string;
  /** Journal/resume behaviour: `rerun` forces a task to run again on --resume. */
  resume?: 'skip' | 'rerun';
  /** Role this node came from (for role defaults/vars and files/templates lookup). */
  role?: RoleContext;
  /** Directory relative paths (src, template, file lookups) resolve against. */
  baseDir: string;
}

export interface LoopControl {
  loopVar: string; // default 'item'
  label?: string;
  pause?: number; // seconds
  indexVar?: string;
}

export interface Task extends TaskKeywords {
  kind: 'task';
  /** Stable id (file:line:col) used by events, journal and --start-at-task. */
  id: string;
  module: string;
  args: Record<string, unknown>;
  argsPos: SourcePos;
  loop?: unknown;
  loopControl?: LoopControl;
  register?: string;
  until?: Expr;
  retries?: number;
  delay?: number;
  failedWhen?: Expr[];
  changedWhen?: Expr[];
  notify: string[];
}

export interface Block extends TaskKeywords {
  kind: 'block';
  id: string;
  block: TaskNode[];
  rescue: TaskNode[];
  always: TaskNode[];
}

/** `include_tasks` is resolved at run time (its file may be templated); `import_tasks` is inlined by the loader. */
export interface IncludeTasks extends TaskKeywords {
  kind: 'include_tasks';
  id: string;
  file: string;
}

export type TaskNode = Task | Block | IncludeTasks;

export interface Handler extends Task {
  /** Names this handler answers to: its name plus `listen` topics. */
  listen: string[];
}

export type SerialSpec = Array<number | string>; // numbers or percentages ("30%")

export interface Play {
  name: string;
  pos: SourcePos;
  keyPos: Record<string, SourcePos>;
  hosts: string;
  vars: Vars;
  /** vars_files already loaded (in order); later files win. */
  varsFiles: Vars[];
  /** Default false in tsbm (Ansible: true): bare-metal nodes have no facts until the ramdisk is up. */
  gatherFacts: boolean;
  serial?: SerialSpec;
  maxFailPercentage?: number;
  anyErrorsFatal: boolean | string;
  strategy: 'linear' | 'free';
  tags: string[];
  become?: boolean;
  becomeUser?: string;
  environment?: Record<string, unknown>;
  /** pre_tasks, then roles' tasks (wrapped in blocks carrying RoleContext), then tasks, then post_tasks. */
  preTasks: TaskNode[];
  roleTasks: TaskNode[];
  tasks: TaskNode[];
  postTasks: TaskNode[];
  handlers: Handler[];
  roles: RoleContext[];
  /** Directory of the file the play came from. */
  baseDir: string;
}

export interface Playbook {
  file: string; // absolute path
  dir: string;
  plays: Play[];
}
