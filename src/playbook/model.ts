// The typed playbook model the loader produces and the executor runs. Every node keeps its
// source position so any error (schema, template, runtime) can name file:line:col. The keyword
// fields come from the keyword table (keywords.ts): one declaration per keyword.
import type { SourcePos } from '../errors.js';
import type { Vars } from '../types.js';
import type { Expr } from './expr.js';
import type { KeywordFields } from './keywords.js';

export type { Expr } from './expr.js';
;

export interface RoleContext {
  name: string;
  path: string; // roles/NAME directory
  defaults: Vars; // lowest precedence
  vars: Vars; // above block vars? no: Ansible puts role vars above play vars_files, below block vars
}

/** Keywords shared by tasks and blocks (Ansible inherits them play -> block -> task). */
export interface TaskKeywords extends KeywordFields<'block'> {
  pos: SourcePos;
  /** Positions of individual keys, for precise errors (e.g. keyPos.when). */
  keyPos: Record<string, SourcePos>;
  when: Expr[];
  tags: string[];
  vars: Vars;
  /** Role this node came from (for role defaults/vars and files/templates lookup). */
  role?: RoleContext;
  /** Directory relative paths (src, template, file lookups) resolve against. */
  baseDir: string;
}

/** The keywords a task has beyond a block's (loop, register, until, notify, ...). */
type TaskOnlyFields = Omit<KeywordFields<'task'>, keyof KeywordFields<'block'>>;

export interface Task extends TaskKeywords, TaskOnlyFields {
  kind: 'task';
  /** Stable id (file:line:col) used by events, journal and --start-at-task. */
  id: string;
  module: string;
  args: Record<string, unknown>;
  argsPos: SourcePos;
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
  /** `include_role` with a templated name: the role is found and loaded when reached, per host. */
  includeRole?: IncludeRoleSpec;
}

export interface IncludeRoleSpec {
  /** The role name as written (a template). */
  name: string;
  tasksFrom?: string;
  /** Role parameters (`vars:` inside include_role). */
  vars?: Vars;
}

export type TaskNode = Task | Block | IncludeTasks;

export interface Handler extends Task {
  /** Names this handler answers to: its name plus `listen` topics. */
  listen: string[];
}

export type SerialSpec = Array<number | string>; // numbers or percentages ("30%")

export interface Play extends KeywordFields<'play'> {
  name: string;
  pos: SourcePos;
  keyPos: Record<string, SourcePos>;
  hosts: string;
  vars: Vars;
  /** vars_files already loaded (in order); later files win. */
  varsFiles: Vars[];
  /** Default false in tsbm (Ansible: true): bare-metal nodes have no facts until the ramdisk is up. */
  gatherFacts: boolean;
  /** A boolean, or a condition evaluated with a failed host's variables (`"eq on_failure 'stop'"`). */
  anyErrorsFatal: boolean | string;
  strategy: 'linear' | 'free';
  tags: string[];
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
