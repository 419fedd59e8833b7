// Controller files that inventory data names (file:// image sources, instance_info kernel and
// ramdisk, driver_info.bootloader, ks_template) are read, served to nodes or written to their
// disks. Where that data comes from someone else (an Ironic import of a tenant's node), a path
// could name the controller's keys or vault files; so, as Ironic's file_url_allowed_paths, such
// files must lie in documented directories. The file's real path is judged (a symlink out of an
// allowed directory is refused), against the real paths of the directories.
import { realpathSync } from 'node:fs';
import { isAbsolute, resolve, sep } from 'node:path';
import { TsbmError } from '../errors.js';
import { settings } from '../config/settings.js';
import type { Vars } from '../types.js';

/** Always allowed: where an operator keeps images for tsbm (FHS: state, and data served). */
export const DEFAULT_ALLOWED_PATHS: readonly string[] = ['/var/lib/tsbm', '/srv/tsbm'];
const VARIABLE = 'tsbm_file_url_allowed_paths';

/** The variable's directories: a list, or one comma-separated string; relative ones against `baseDir`. */
function fromVariable(vars: Vars, baseDir: string): string[] {
  const v = vars[VARIABLE];
  if (v === undefined || v === null || v === '') return [];
  const list = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : undefined;
  if (!list || list.some((x) => typeof x !== 'string')) {
    throw new TsbmError('options', `${VARIABLE} is not a list of directories`, { hint: `give ${VARIABLE}: [/srv/images, ...] (or one comma-separated string)` });
  }
  return (list as string[]).map((x) => x.trim()).filter(Boolean).map((x) => resolve(baseDir, x));
}

/** Directories files from inventory data may be in: the defaults, tsbm.cfg / TSBM_FILE_URL_ALLOWED_PATHS, the variable, and `extra`. */
export function allowedPaths(vars: Vars, baseDir: string, extra: readonly string[] = []): string[] {
  return [...DEFAULT_ALLOWED_PATHS, ...(settings().get('file_url_allowed_paths') ?? []), ...fromVariable(vars, baseDir), ...extra];
}

const real = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
};

/** Why `file` (absolute) may not be read as inventory data names it, or undefined when it may. */
export function pathNotAllowed(file: string, allowed: readonly string[]): string | undefined {
  if (!isAbsolute(file)) return `${file} is not an absolute path`;
  const target = real(file);
  const inside = allowed.some((dir) => {
    const d = real(dir);
    return target === d || target.startsWith(d.endsWith(sep) ? d : d + sep);
  });
  if (inside) return undefined;
  return `${file}${target !== resolve(file) ? ` (really ${target})` : ''} is not in a directory files may be named from (${allowed.join(', ')})`;
}

/** What to do about a file outside the allowed directories. */
export const NOT_ALLOWED_FIX = `move the file into one of those directories, or add its directory to ${VARIABLE} (a variable) or file_url_allowed_paths in tsbm.cfg (docs/security.md)`;

interface PathContext {
  vars: Vars;
  host: string;
  task: string;
  services: { playbookDir: string };
}

/**
 * Throws a one-line error naming the host, `name` (the variable that named the file) and the
 * directories when `file` (absolute) is outside them; `extra`: directories allowed for this
 * kind of file besides (a template's search path).
 */
export function assertAllowedPath(ctx: PathContext, name: string, file: string, extra: readonly string[] = []): void {
  const problem = pathNotAllowed(file, allowedPaths(ctx.vars, ctx.services.playbookDir, extra));
  if (problem) throw new TsbmError('options', `${ctx.host}: ${name}: ${problem}`, { host: ctx.host, task: ctx.task, hint: NOT_ALLOWED_FIX });
}
