// Playbook loader: YAML with positions -> typed model (src/playbook/model.ts). import_playbook
// and import_tasks are inlined here; include_tasks stays a node the executor expands at run
// time (loadTasksFile). tsbm differs from Ansible in one default: gather_facts is false.
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parseError, type SourcePos, type TsbmError } from '../errors.js';
import { allModules, getModule } from '../modules/registry.js';
import { checkAt } from '../schema/ajv.js';
import { loadYamlFile, type PathSeg, type YamlSource } from '../schema/yaml-source.js';
import { attempt, type LoadContext, type LoadOptions } from './context.js';
import type { Expr, Handler, Play, Playbook, RoleContext, TaskNode } from './model.js';
import { parsePlay } from './play.js';
import { envRolesPath } from './roles.js';
import { importPlaybookSchema } from './schema.js';
import { loadRole, loadTaskFileInto } from './task.js';
import type { Vars } from '../types.js';
import { isMapping, isTemplated, toExprs, toStringList } from './values.js';

export type { LoadOptions } from './context.js';
;

function makeContext(file: string, opts: LoadOptions): LoadContext {
  const dir = dirname(file);
  return {
    file,
    rootDir: dir,
    baseDir: dir,
    chain: [resolve(file)],
    getModule: opts.getModule ?? getModule,
    moduleNames: opts.moduleNames ?? (() => allModules().map((m) => m.name)),
    rolesPath: [...(opts.rolesPath ?? []), ...envRolesPath()],
    report:
      opts.onError ??
      ((e: TsbmError) => {
        throw e;
      }),
  };
}

/** Loads a playbook file. Throws the first TsbmError, or (with opts.onError) reports all and returns what loaded. */
export function loadPlaybook(file: string, opts: LoadOptions = {}): Playbook {
  const ctx = makeContext(file, opts);
  const plays = attempt(ctx, () => loadPlays(ctx, file), [] as Play[]);
  return { file: resolve(file), dir: resolve(dirname(file)), plays };
}

function loadPlays(ctx: LoadContext, file: string, from?: SourcePos): Play[] {
  const src = loadYamlFile(file, from);
  if (src.value === null || src.value === undefined) {
    throw parseError('the playbook is empty', src.pos([]), 'a playbook is a list of plays: "- hosts: ..."');
  }
  if (!Array.isArray(src.value)) {
    throw parseError(
      'a playbook must be a list of plays',
      src.pos([]),
      'start each play with "- hosts: PATTERN"',
    );
  }
  const plays: Play[] = [];
  src.value.forEach((raw, i) => {
    const path: PathSeg[] = [i];
    if (isMapping(raw) && 'import_playbook' in raw) {
      plays.push(...attempt(ctx, () => importPlaybook(ctx, src, path, raw), [] as Play[]));
      return;
    }
    const play = attempt(ctx, () => parsePlay(ctx, src, path, raw, i), undefined);
    if (play) plays.push(play);
  });
  return plays;
}

function importPlaybook(
  ctx: LoadContext,
  src: YamlSource,
  path: PathSeg[],
  raw: Record<string, unknown>,
): Play[] {
  const err = checkAt(importPlaybookSchema, raw, src, path, 'import_playbook');
  if (err) throw err;
  const ref = String(raw.import_playbook);
  const at = src.pos([...path, 'import_playbook']);
  if (isTemplated(ref)) throw parseError('import_playbook cannot take a template', at, 'write the file name');
  const file = isAbsolute(ref) ? ref : join(dirname(ctx.file), ref);
  const abs = resolve(file);
  if (ctx.chain.includes(abs)) {
    const names = [...ctx.chain.slice(ctx.chain.indexOf(abs)), abs].map((f) =>
      f.replace(`${resolve(ctx.rootDir)}/`, ''),
    );
    throw parseError(`circular import: ${names.join(' -> ')}`, at, 'remove one of the imports in this chain');
  }
  const inner: LoadContext = { ...ctx, file, baseDir: dirname(file), chain: [...ctx.chain, abs] };
  const plays = loadPlays(inner, file, at);
  // The import's vars sit below each play's own vars; its when/tags apply to every task.
  const when: Expr[] = toExprs(raw.when, src, [...path, 'when']);
  for (const p of plays) {
    if (isMapping(raw.vars)) p.vars = { ...raw.vars, ...p.vars };
    p.tags = [...toStringList(raw.tags), ...p.tags];
    if (when.length > 0) {
      const wrap = (nodes: TaskNode[]): TaskNode[] =>
        nodes.length === 0
          ? nodes
          : [
              {
                kind: 'block',
                id: `${nodes[0]!.id}:import`,
                pos: at,
                keyPos: {},
                when,
                tags: [],
                vars: {},
                baseDir: p.baseDir,
                block: nodes,
                rescue: [],
                always: [],
              },
            ];
      p.preTasks = wrap(p.preTasks);
      p.roleTasks = wrap(p.roleTasks);
      p.tasks = wrap(p.tasks);
      p.postTasks = wrap(p.postTasks);
    }
  }
  return plays;
}

/**
 * Loads a role at run time (`include_role` with a templated name): `name` is already rendered,
 * `from` is the include's position (its file is where roles/ beside it are looked for).
 */
export function loadIncludedRole(
  name: string,
  spec: { tasksFrom?: string; vars?: Vars },
  from: SourcePos,
  playbookDir: string,
  opts: LoadOptions = {},
): { nodes: TaskNode[]; handlers: Handler[] } {
  const ctx = makeContext(from.file, opts);
  ctx.rootDir = playbookDir;
  ctx.chain = [];
  // Every position of the role's entry is the include's: it has no YAML of its own.
  const src: YamlSource = { file: from.file, value: undefined, pos: () => from, keyPos: () => from };
  const loaded = loadRole(ctx, src, [], { role: name }, spec.tasksFrom);
  if (spec.vars) loaded.block.vars = { ...spec.vars, ...loaded.block.vars };
  return { nodes: [loaded.block], handlers: loaded.handlers };
}

/**
 * Loads a task file at run time (include_tasks): `file` is already rendered; `from` is the
 * include's position, `playbookDir` gives stable task ids, `role` the including task's role.
 */
export function loadTasksFile(
  file: string,
  from: SourcePos,
  playbookDir: string,
  role?: RoleContext,
  opts: LoadOptions = {},
): TaskNode[] {
  const ctx = makeContext(file, opts);
  ctx.rootDir = playbookDir;
  ctx.baseDir = role ? role.path : dirname(file);
  ctx.chain = [];
  if (role) ctx.role = role;
  return loadTaskFileInto(ctx, file, from);
}
