// State the loader threads through plays, task lists and roles: which file we are in, the
// import chain (for circular-import errors), the module lookup, and where errors go (thrown
// at once by `tsbm run`, collected by `tsbm validate`).
import { TsbmError } from '../errors.js';
import type { ModuleDef } from '../module-api/types.js';
import type { PathSeg, YamlSource } from '../schema/yaml-source.js';
import type { Handler, RoleContext } from './model.js';

export interface LoadOptions {
  /** Module lookup (default: src/modules/registry.ts). Tests may pass their own. */
  getModule?: (name: string) => ModuleDef | undefined;
  /** Every module name, for "did you mean" (default: the registry's). */
  moduleNames?: () => string[];
  /** When given, errors are reported here and loading goes on (validate); otherwise the first error is thrown. */
  onError?: (err: TsbmError) => void;
  /** `--roles-path`: directories searched for roles after `roles/` beside the playbook (see roles.ts). */
  rolesPath?: readonly string[];
}

export interface LoadContext {
  /** The file being read now (as given, relative paths stay relative for messages). */
  file: string;
  /** Directory of the top-level playbook (role search path, task ids). */
  rootDir: string;
  /** Directory relative references resolve against. */
  baseDir: string;
  /** Files being imported, outermost first. */
  chain: string[];
  role?: RoleContext;
  /** Handlers of roles imported by tasks (import_role); the play appends them to its own. */
  playHandlers?: Handler[];
  getModule: (name: string) => ModuleDef | undefined;
  moduleNames: () => string[];
  report: (err: TsbmError) => void;
  /** Role directories from --roles-path and TSBM_ROLES_PATH, searched before the shipped roles. */
  rolesPath: readonly string[];
}

/** Where a loaded node came from, for checks that need positions inside it (validate). */
export interface NodeSource {
  src: YamlSource;
  path: PathSeg[];
}

const sources = new WeakMap<object, NodeSource>();

export function rememberSource(node: object, src: YamlSource, path: PathSeg[]): void {
  sources.set(node, { src, path });
}

/** The YAML source and path a model node (task, block, play, handler) was loaded from. */
export function sourceOf(node: object): NodeSource | undefined {
  return sources.get(node);
}

/** Runs `fn`; a TsbmError it throws is reported and `fallback` returned (so loading goes on). */
export function attempt<T>(ctx: LoadContext, fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof TsbmError) {
      ctx.report(e);
      return fallback;
    }
    throw e;
  }
}
