// Roles: found by name in roles/ beside the playbook, then beside the including file, then in
// the directories of --roles-path and TSBM_ROLES_PATH, then among the roles tsbm ships (so
// `roles: [power-off]` works from any repository), or by path;
// `roles/NAME/{tasks,defaults,vars,handlers}/main.yml`, `files/`, `templates/`. The role's tasks
// come back wrapped in one Block carrying the RoleContext (loadRole in task.ts).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseError, type SourcePos } from '../errors.js';
import { printable } from '../schema/ajv.js';
import { suggestion } from '../schema/did-you-mean.js';
import { loadYamlFile, type PathSeg, type YamlSource } from '../schema/yaml-source.js';
import type { Vars } from '../types.js';
import type { LoadContext } from './context.js';
import type { RoleContext } from './model.js';
import { isMapping } from './values.js';

/** A path as the operator would write it: relative to the working directory when inside it. */
export function displayPath(p: string): string {
  const rel = relative(process.cwd(), p);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : p;
}

/** The roles tsbm ships (playbooks/roles of the package), from this file in src/ or dist/. */
const SHIPPED_ROLES = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'playbooks', 'roles');

/** `TSBM_ROLES_PATH`: directories separated by `:` (Ansible's ANSIBLE_ROLES_PATH), relative to the working directory. */
export function envRolesPath(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.TSBM_ROLES_PATH ?? '').split(delimiter).filter((d) => d.trim() !== '');
}

/** Directories searched for a role name, in order: beside the playbook, the roles path, the shipped roles. */
function roleSearchPath(ctx: LoadContext): string[] {
  const here = dirname(ctx.file);
  const dirs = [join(ctx.rootDir, 'roles'), join(here, 'roles'), join(here, 'playbooks', 'roles'), ...ctx.rolesPath, SHIPPED_ROLES];
  return [...new Set(dirs.map((d) => displayPath(resolve(d))))];
}

function findRole(ctx: LoadContext, name: string): string | undefined {
  const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();
  if (name.includes('/')) {
    const p = isAbsolute(name) ? name : resolve(dirname(ctx.file), name);
    return isDir(p) ? displayPath(p) : undefined;
  }
  for (const d of roleSearchPath(ctx)) if (isDir(join(d, name))) return join(d, name);
  return undefined;
}

/** `dir/main.yml` or `dir/main.yaml`, if present. */
function mainFile(dir: string): string | undefined {
  for (const f of ['main.yml', 'main.yaml']) if (existsSync(join(dir, f))) return join(dir, f);
  return undefined;
}

function loadVarsFile(file: string | undefined, from: SourcePos): Vars {
  if (!file) return {};
  const src = loadYamlFile(file, from);
  if (src.value === null || src.value === undefined) return {};
  if (!isMapping(src.value)) throw parseError(`${file} must be a mapping of variables`, src.pos([]));
  return src.value;
}

/** A role found on disk: its context (defaults, vars) and the files its tasks and handlers come from. */
export interface FoundRole {
  context: RoleContext;
  /** The role's task file (tasks/main.yml, or tasks_from), if it has one. */
  tasksFile: string | undefined;
  handlersFile: string | undefined;
}

/**
 * Finds a role entry's role (`- NAME`, `- role: NAME`) and loads its variables; parsing its
 * tasks and handlers is task.ts's job (loadRole there), which keeps this file below it.
 */
export function findRoleEntry(
  ctx: LoadContext,
  src: YamlSource,
  path: PathSeg[],
  raw: unknown,
  tasksFrom?: string,
): FoundRole {
  const entry = isMapping(raw) ? raw : {};
  const name = typeof raw === 'string' ? raw : String(entry.role ?? entry.name ?? '');
  const at = src.pos(path);
  if (!name) throw parseError('role entry has no name', at, 'write "- role: NAME" or "- NAME"');
  const dir = findRole(ctx, name);
  if (!dir) {
    const known = roleSearchPath(ctx).flatMap((d) => {
      try {
        return readdirSync(d, { withFileTypes: true })
          .filter((e) => e.isDirectory())
          .map((e) => e.name);
      } catch {
        return [];
      }
    });
    throw parseError(
      `role "${printable(name)}" not found${suggestion(name, known)}`,
      at,
      `looked in ${roleSearchPath(ctx).join(', ')}`,
    );
  }
  const context: RoleContext = {
    name: name.includes('/') ? name.split('/').pop()! : name,
    path: dir,
    defaults: loadVarsFile(mainFile(join(dir, 'defaults')), at),
    vars: loadVarsFile(mainFile(join(dir, 'vars')), at),
  };
  const tasksFile = tasksFrom
    ? join(dir, 'tasks', /\.ya?ml$/.test(tasksFrom) ? tasksFrom : `${tasksFrom}.yml`)
    : mainFile(join(dir, 'tasks'));
  return { context, tasksFile, handlersFile: mainFile(join(dir, 'handlers')) };
}
