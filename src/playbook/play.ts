// Parses one play: keywords, vars_files (loaded now), roles, task lists and handlers.
import { isAbsolute, join } from 'node:path';
import { parseError } from '../errors.js';
import { checkAt, printable } from '../schema/ajv.js';
import { loadYamlFile, type PathSeg, type YamlSource } from '../schema/yaml-source.js';
import type { Vars } from '../types.js';
import { attempt, type LoadContext, rememberSource } from './context.js';
import type { Handler, Play, RoleContext, TaskNode } from './model.js';
import { keywordValues } from './keywords.js';
import { playSchema } from './schema.js';
import { loadRole, parseHandler, parseTaskList } from './task.js';
import { isMapping, isTemplated, keyPositions } from './values.js';

function loadVarsFiles(ctx: LoadContext, src: YamlSource, path: PathSeg[], raw: unknown): Vars[] {
  const list = raw === undefined || raw === null ? [] : Array.isArray(raw) ? raw : [raw];
  const out: Vars[] = [];
  list.forEach((ref, i) => {
    const at = src.pos(Array.isArray(raw) ? [...path, i] : path);
    // A templated name can only be resolved per host at run time.
    if (isTemplated(ref)) return;
    const file = isAbsolute(String(ref)) ? String(ref) : join(ctx.baseDir, String(ref));
    const vars = attempt(
      ctx,
      () => {
        const vsrc = loadYamlFile(file, at);
        if (vsrc.value === null || vsrc.value === undefined) return {};
        if (!isMapping(vsrc.value))
          throw parseError(`vars file ${file} must be a mapping of variables`, vsrc.pos([]));
        return vsrc.value;
      },
      undefined,
    );
    if (vars) out.push(vars);
  });
  return out;
}

export function parsePlay(
  ctx: LoadContext,
  src: YamlSource,
  path: PathSeg[],
  raw: unknown,
  index: number,
): Play | undefined {
  if (!isMapping(raw)) {
    throw parseError(
      'a play must be a mapping (hosts:, tasks: ...)',
      src.pos(path),
      'start a play with "- hosts: PATTERN"',
    );
  }
  const what = typeof raw.name === 'string' ? `play "${printable(raw.name)}"` : `play ${index + 1}`;
  const err = checkAt(playSchema, raw, src, path, what);
  if (err) throw err;
  const kw = keywordValues('play', raw, { src, path, what });
  const hosts = kw.hosts ?? '';
  const play: Play = {
    ...kw,
    name: kw.name ?? hosts,
    pos: src.pos(path),
    keyPos: keyPositions(src, path, raw),
    hosts,
    vars: isMapping(raw.vars) ? raw.vars : {},
    varsFiles: loadVarsFiles(ctx, src, [...path, 'vars_files'], raw.vars_files),
    // tsbm default: no fact gathering (nodes have no OS to ask until the ramdisk is up).
    gatherFacts: kw.gatherFacts === true,
    anyErrorsFatal: kw.anyErrorsFatal ?? false,
    strategy: kw.strategy ?? 'linear',
    tags: kw.tags ?? [],
    preTasks: [],
    roleTasks: [],
    tasks: [],
    postTasks: [],
    handlers: [],
    roles: [],
    baseDir: ctx.baseDir,
  };

  const imported: Handler[] = [];
  const pctx: LoadContext = { ...ctx, playHandlers: imported };
  const list = (key: string): TaskNode[] => parseTaskList(pctx, src, [...path, key], raw[key]);
  play.preTasks = list('pre_tasks');
  const roleHandlers: Handler[] = [];
  const roles: RoleContext[] = [];
  if (Array.isArray(raw.roles)) {
    raw.roles.forEach((r, i) => {
      const loaded = attempt(ctx, () => loadRole(ctx, src, [...path, 'roles', i], r), undefined);
      if (!loaded) return;
      roles.push(loaded.context);
      play.roleTasks.push(loaded.block);
      roleHandlers.push(...loaded.handlers);
    });
  }
  play.roles = roles;
  play.tasks = list('tasks');
  play.postTasks = list('post_tasks');
  const handlers: Handler[] = [];
  if (Array.isArray(raw.handlers)) {
    raw.handlers.forEach((h, i) => {
      const parsed = attempt(ctx, () => parseHandler(ctx, src, [...path, 'handlers', i], h), undefined);
      if (parsed) handlers.push(parsed);
    });
  }
  play.handlers = [...handlers, ...roleHandlers, ...imported];
  rememberSource(play, src, path);
  return play;
}
