// Parses one task-list entry (task, block, import_tasks, include_tasks) into the model.
// Modules are found only through the registry lookup in the load context.
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { parseError } from '../errors.js';
import { checkAt, printable } from '../schema/ajv.js';
import { didYouMean } from '../schema/did-you-mean.js';
import { loadYamlFile, type PathSeg, type YamlSource } from '../schema/yaml-source.js';
import { attempt, type LoadContext, rememberSource } from './context.js';
import { findRoleEntry } from './roles.js';
import type { Block, Handler, IncludeTasks, RoleContext, Task, TaskKeywords, TaskNode } from './model.js';
import {
  blockSchema,
  handlerKeywordsSchema,
  importTasksSchema,
  importRoleSchema,
  includeRoleSchema,
  includeTasksSchema,
  shortName,
  taskKeywordNames,
  taskKeywordsSchema,
} from './schema.js';
import { isMapping, isTemplated, keyPositions, toExprs, toStringList } from './values.js';
import { keywordsAt, keywordValues } from './keywords.js';

/** Stable task id: file (relative to the playbook's directory) : line : col. */
function taskId(ctx: LoadContext, src: YamlSource, path: PathSeg[]): string {
  const p = src.pos(path);
  const abs = resolve(p.file);
  const rel = relative(resolve(ctx.rootDir), abs) || abs;
  return `${rel}:${p.line}:${p.col}`;
}

/** How a node is named in messages: `task "Install"`, or `this task` when it has no name. */
function label(raw: Record<string, unknown>, kind: string): string {
  return typeof raw.name === 'string' ? `${kind} "${printable(raw.name)}"` : `this ${kind}`;
}

/** The keywords every node has (the block's), as the keyword table converts them. */
function keywords(
  ctx: LoadContext,
  src: YamlSource,
  path: PathSeg[],
  raw: Record<string, unknown>,
): TaskKeywords {
  const kw: TaskKeywords = {
    ...keywordValues('block', raw, { src, path, what: label(raw, 'task') }),
    pos: src.pos(path),
    keyPos: keyPositions(src, path, raw),
    when: toExprs(raw.when, src, [...path, 'when']),
    tags: toStringList(raw.tags),
    vars: isMapping(raw.vars) ? raw.vars : {},
    baseDir: ctx.baseDir,
  };
  if (ctx.role) kw.role = ctx.role;
  return kw;
}

/** Parses a YAML list of task nodes found at `path`. */
export function parseTaskList(
  ctx: LoadContext,
  src: YamlSource,
  path: PathSeg[],
  value: unknown,
): TaskNode[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    ctx.report(
      parseError(
        `"${String(path[path.length - 1] ?? 'tasks')}" must be a list of tasks`,
        src.pos(path),
        'start each task with "- "',
      ),
    );
    return [];
  }
  const out: TaskNode[] = [];
  value.forEach((item, i) => {
    const node = attempt(ctx, () => parseTaskNode(ctx, src, [...path, i], item), undefined);
    if (node) out.push(node);
  });
  return out;
}

function fail(err: ReturnType<typeof checkAt>): void {
  if (err) throw err;
}

function parseTaskNode(ctx: LoadContext, src: YamlSource, path: PathSeg[], raw: unknown): TaskNode {
  if (!isMapping(raw)) {
    throw parseError(
      `a task must be a mapping (name:, a module and its arguments), got ${raw === null ? 'nothing' : Array.isArray(raw) ? 'a list' : typeof raw}`,
      src.pos(path),
      'write e.g. "- name: Say hi" then "  debug: {msg: hi}"',
    );
  }
  // Accept FQCN spellings of keywords (ansible.builtin.import_tasks) by mapping them first.
  const norm: Record<string, unknown> = {};
  const origKey: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    const s = shortName(k);
    norm[s] = v;
    origKey[s] = k;
  }
  if ('block' in norm) return parseBlock(ctx, src, path, norm);
  if ('import_tasks' in norm) return parseImportTasks(ctx, src, path, norm, origKey);
  if ('include_tasks' in norm) return parseIncludeTasks(ctx, src, path, norm, origKey);
  if ('import_role' in norm || 'include_role' in norm) return parseImportRole(ctx, src, path, norm, origKey);
  return parseTask(ctx, src, path, norm, origKey, false);
}

function parseBlock(ctx: LoadContext, src: YamlSource, path: PathSeg[], raw: Record<string, unknown>): Block {
  fail(checkAt(blockSchema, raw, src, path, label(raw, 'block')));
  const block: Block = {
    ...keywords(ctx, src, path, raw),
    kind: 'block',
    id: taskId(ctx, src, path),
    block: parseTaskList(ctx, src, [...path, 'block'], raw.block),
    rescue: parseTaskList(ctx, src, [...path, 'rescue'], raw.rescue),
    always: parseTaskList(ctx, src, [...path, 'always'], raw.always),
  };
  rememberSource(block, src, path);
  return block;
}

function fileRef(raw: unknown): string | undefined {
  if (typeof raw === 'string') return raw;
  if (isMapping(raw) && typeof raw.file === 'string') return raw.file;
  return undefined;
}

/** Where a task file reference resolves: beside the including file, or in the role's tasks/. */
function resolveTaskFile(ctx: LoadContext, ref: string): string {
  if (isAbsolute(ref)) return ref;
  return join(ctx.role ? join(ctx.role.path, 'tasks') : dirname(ctx.file), ref);
}

function parseImportTasks(
  ctx: LoadContext,
  src: YamlSource,
  path: PathSeg[],
  raw: Record<string, unknown>,
  origKey: Record<string, string>,
): Block {
  fail(checkAt(importTasksSchema, raw, src, path, label(raw, 'import_tasks')));
  const keyPath = [...path, origKey.import_tasks ?? 'import_tasks'];
  const ref = fileRef(raw.import_tasks)!;
  if (isTemplated(ref)) {
    throw parseError(
      'import_tasks is resolved when the playbook loads; its file name cannot be a template',
      src.pos(keyPath),
      'use include_tasks for a templated file name',
    );
  }
  const file = resolveTaskFile(ctx, ref);
  const tasks = loadTaskFileInto(ctx, file, src.pos(keyPath));
  // Inlined as a block so the import's own keywords (when, tags, vars) apply to every task.
  const block: Block = {
    ...keywords(ctx, src, path, raw),
    kind: 'block',
    id: taskId(ctx, src, path),
    block: tasks,
    rescue: [],
    always: [],
  };
  rememberSource(block, src, path);
  return block;
}

/** Loads a task file for import (checking the chain for cycles) with positions from that file. */
export function loadTaskFileInto(
  ctx: LoadContext,
  file: string,
  from: ReturnType<YamlSource['pos']>,
): TaskNode[] {
  const abs = resolve(file);
  if (ctx.chain.includes(abs)) {
    const names = [...ctx.chain.slice(ctx.chain.indexOf(abs)), abs].map(
      (f) => relative(resolve(ctx.rootDir), f) || f,
    );
    throw parseError(
      `circular import: ${names.join(' -> ')}`,
      from,
      'remove one of the imports in this chain',
    );
  }
  const fsrc = loadYamlFile(file, from);
  const inner: LoadContext = { ...ctx, file, chain: [...ctx.chain, abs] };
  if (!Array.isArray(fsrc.value)) {
    throw parseError(`${file} must be a list of tasks`, fsrc.pos([]), 'start each task with "- "');
  }
  return parseTaskList(inner, fsrc, [], fsrc.value);
}

function parseIncludeTasks(
  ctx: LoadContext,
  src: YamlSource,
  path: PathSeg[],
  raw: Record<string, unknown>,
  origKey: Record<string, string>,
): IncludeTasks {
  fail(checkAt(includeTasksSchema, raw, src, path, label(raw, 'include_tasks')));
  const keyPath = [...path, origKey.include_tasks ?? 'include_tasks'];
  const ref = fileRef(raw.include_tasks)!;
  // The executor renders `file` and resolves a relative result against the node's baseDir, so
  // the including file's directory (or the role's tasks/) is made part of the path here.
  const file = ref.trimStart().startsWith('{{') ? ref : resolve(resolveTaskFile(ctx, ref));
  const node: IncludeTasks = {
    ...keywords(ctx, src, path, raw),
    kind: 'include_tasks',
    id: taskId(ctx, src, path),
    file,
  };
  // A literal file name is checked now so a typo fails before anything runs.
  if (!isTemplated(ref)) loadYamlFile(resolveTaskFile(ctx, ref), src.pos(keyPath));
  rememberSource(node, src, path);
  return node;
}

/**
 * `import_role` (and `include_role` with a literal name, treated the same way): the role's
 * tasks inlined as a block carrying its RoleContext; its handlers join the play's. An
 * `include_role` with a templated name stays a node the executor loads when it is reached.
 */
function parseImportRole(
  ctx: LoadContext,
  src: YamlSource,
  path: PathSeg[],
  raw: Record<string, unknown>,
  origKey: Record<string, string>,
): Block | IncludeTasks {
  const key = 'import_role' in raw ? 'import_role' : 'include_role';
  fail(
    checkAt(key === 'import_role' ? importRoleSchema : includeRoleSchema, raw, src, path, label(raw, key)),
  );
  const spec = raw[key] as { name: string; tasks_from?: string; vars?: Record<string, unknown> };
  const keyPath = [...path, origKey[key] ?? key];
  if (isTemplated(spec.name)) {
    if (key === 'import_role') {
      throw parseError('import_role needs a literal role name (it is inlined when the playbook loads)', src.pos([...keyPath, 'name']), 'use include_role for a templated name');
    }
    return includeRoleNode(ctx, src, path, raw, spec);
  }
  const loaded = loadRole(ctx, src, keyPath, { role: spec.name }, spec.tasks_from);
  ctx.playHandlers?.push(...loaded.handlers);
  const kw = keywords(ctx, src, path, raw);
  const block: Block = {
    ...loaded.block,
    ...kw,
    kind: 'block',
    id: taskId(ctx, src, path),
    name: kw.name ?? loaded.block.name,
    role: loaded.context,
    baseDir: loaded.context.path,
    vars: { ...(spec.vars ?? {}), ...kw.vars },
  };
  rememberSource(block, src, path);
  return block;
}

/** `include_role` with a templated name: loaded when reached (the executor renders the name per host). */
function includeRoleNode(
  ctx: LoadContext,
  src: YamlSource,
  path: PathSeg[],
  raw: Record<string, unknown>,
  spec: { name: string; tasks_from?: string; vars?: Record<string, unknown> },
): IncludeTasks {
  const node: IncludeTasks = {
    ...keywords(ctx, src, path, raw),
    kind: 'include_tasks',
    id: taskId(ctx, src, path),
    file: '',
    includeRole: {
      name: spec.name,
      ...(spec.tasks_from !== undefined ? { tasksFrom: spec.tasks_from } : {}),
      ...(spec.vars ? { vars: spec.vars } : {}),
    },
  };
  rememberSource(node, src, path);
  return node;
}

function parseTask(
  ctx: LoadContext,
  src: YamlSource,
  path: PathSeg[],
  raw: Record<string, unknown>,
  origKey: Record<string, string>,
  handler: boolean,
): Task {
  const what = label(raw, handler ? 'handler' : 'task');
  const allowed = handler ? new Set([...taskKeywordNames, 'listen']) : taskKeywordNames;
  const moduleKeys: string[] = [];
  for (const k of Object.keys(raw)) {
    if (allowed.has(k)) continue;
    if (ctx.getModule(k)) {
      moduleKeys.push(k);
      continue;
    }
    const orig = origKey[k] ?? k;
    const shown = printable(orig);
    const asKeyword = didYouMean(k, [
      ...allowed,
      'block',
      'import_tasks',
      'include_tasks',
      'import_role',
      'include_role',
    ]);
    if (asKeyword) {
      throw parseError(
        `unknown key "${shown}" in ${what} (did you mean "${asKeyword}"?)`,
        src.keyPos([...path, orig]),
      );
    }
    const asModule = didYouMean(k, ctx.moduleNames());
    throw parseError(
      `unknown ${asModule ? 'module' : 'module or keyword'} "${shown}" in ${what}${asModule ? ` (did you mean "${asModule}"?)` : ''}`,
      src.keyPos([...path, orig]),
      'run "tsbm modules" for the list of modules',
    );
  }
  if (moduleKeys.length === 0) {
    throw parseError(
      `no module in ${what}`,
      src.pos(path),
      'add one module key with its arguments, e.g. "command: ls"',
    );
  }
  if (moduleKeys.length > 1) {
    throw parseError(
      `more than one module in ${what}: ${moduleKeys.join(', ')}`,
      src.keyPos([...path, origKey[moduleKeys[1]!] ?? moduleKeys[1]!]),
      'split it into one task per module',
    );
  }
  const name = moduleKeys[0]!;
  const mod = ctx.getModule(name)!;
  const modKey = origKey[name] ?? name;
  const { [name]: rawArgs, ...kwRaw } = raw;
  fail(checkAt(handler ? handlerKeywordsSchema : taskKeywordsSchema, kwRaw, src, path, what));

  let args: Record<string, unknown>;
  const argsPath = [...path, modKey];
  if (rawArgs === null || rawArgs === undefined) args = {};
  else if (typeof rawArgs === 'string' && mod.freeForm) args = { [mod.freeForm]: rawArgs };
  else if (isMapping(rawArgs)) args = { ...rawArgs };
  else {
    throw parseError(
      `module ${mod.name} takes a mapping of arguments, got ${Array.isArray(rawArgs) ? 'a list' : typeof rawArgs}`,
      src.pos(argsPath),
      `run "tsbm modules ${mod.name}" to see its arguments`,
    );
  }
  if (isMapping(kwRaw.args)) args = { ...kwRaw.args, ...args };
  fail(checkAt(mod.args, args, src, argsPath, `module ${mod.name}`, { noun: 'argument' }));

  const task: Task = {
    ...keywords(ctx, src, path, kwRaw),
    ...keywordValues('task', kwRaw, { src, path, what }, keywordsAt('block')),
    kind: 'task',
    id: taskId(ctx, src, path),
    module: mod.name,
    args,
    argsPos: src.pos(argsPath),
    notify: toStringList(kwRaw.notify),
  };
  task.keyPos = keyPositions(src, path, raw);
  rememberSource(task, src, path);
  return task;
}

/** Parses a handler list entry: a task plus `listen`. */
export function parseHandler(ctx: LoadContext, src: YamlSource, path: PathSeg[], raw: unknown): Handler {
  if (!isMapping(raw)) throw parseError('a handler must be a mapping like a task', src.pos(path));
  const norm: Record<string, unknown> = {};
  const origKey: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    norm[shortName(k)] = v;
    origKey[shortName(k)] = k;
  }
  const task = parseTask(ctx, src, path, norm, origKey, true);
  const handler: Handler = {
    ...task,
    listen: [...(task.name ? [task.name] : []), ...toStringList(norm.listen)],
  };
  rememberSource(handler, src, path);
  return handler;
}

export interface LoadedRole {
  context: RoleContext;
  block: Block;
  handlers: Handler[];
}

/** A role entry (play `roles:` or import_role) as one Block carrying its RoleContext, and its handlers. */
export function loadRole(
  ctx: LoadContext,
  src: YamlSource,
  path: PathSeg[],
  raw: unknown,
  tasksFrom?: string,
): LoadedRole {
  const { context, tasksFile, handlersFile } = findRoleEntry(ctx, src, path, raw, tasksFrom);
  const entry = isMapping(raw) ? raw : {};
  const at = src.pos(path);
  const dir = context.path;
  const inner: LoadContext = { ...ctx, role: context, baseDir: dir, file: join(dir, 'tasks', 'main.yml') };
  const tasks = tasksFile ? loadTaskFileInto({ ...inner, file: tasksFile }, tasksFile, at) : [];
  const block: Block = {
    kind: 'block',
    id: taskId(ctx, src, path),
    name: `role ${context.name}`,
    pos: at,
    keyPos: isMapping(raw) ? keyPositions(src, path, raw) : {},
    when: toExprs(entry.when, src, [...path, 'when']),
    tags: toStringList(entry.tags),
    // Role parameters (`- role: x` with `vars:`) apply to the role's tasks.
    vars: isMapping(entry.vars) ? entry.vars : {},
    role: context,
    baseDir: dir,
    block: tasks,
    rescue: [],
    always: [],
  };
  if (typeof entry.become === 'boolean') block.become = entry.become;
  if (typeof entry.delegate_to === 'string') block.delegateTo = entry.delegate_to;
  rememberSource(block, src, path);

  const handlers: Handler[] = [];
  if (handlersFile) {
    const hsrc = loadYamlFile(handlersFile, at);
    const hctx: LoadContext = { ...inner, file: handlersFile };
    if (Array.isArray(hsrc.value)) {
      hsrc.value.forEach((h, i) => {
        const parsed = attempt(hctx, () => parseHandler(hctx, hsrc, [i], h), undefined);
        if (parsed) handlers.push(parsed);
      });
    } else if (hsrc.value !== null) {
      throw parseError(`${handlersFile} must be a list of handlers`, hsrc.pos([]));
    }
  }
  return { context, block, handlers };
}
