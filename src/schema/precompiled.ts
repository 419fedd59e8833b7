// Validators compiled at build time (`npm run build` runs dist/schema/precompile.js, which
// writes dist/validators/<key>.cjs with ajv's standalone code, and <key>.v8cache with V8's
// compiled code for it). Compiling the playbook and module schemas at run time costs a
// `tsbm run` more than its SSH work on a small fleet; even parsing the generated code for the
// play and task schemas (~140 KB each) costs tens of milliseconds, which the code cache saves.
// A validator is found by a hash of the exact JSON schema and the ajv mode, so a stale or
// missing file can only miss, never validate against an old schema: a miss (tests run from
// src/, ad-hoc schemas, a build without the step) is compiled at run time as before. A code
// cache V8 rejects (another Node version) only means the source is compiled as usual.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';
import type { ValidateFunction } from 'ajv';

/** `plain` validates as written; `coerce` also converts "5"/"true" (module arguments at run time). */
export type AjvMode = 'plain' | 'coerce';

/** Where the build puts the generated validators, relative to this file (dist/schema/). */
const PRECOMPILED_DIR = join(import.meta.dirname, '..', 'validators');

/** The file name a schema's validator is stored under (stable across processes). */
export function validatorKey(mode: AjvMode, schema: object): string {
  return createHash('sha256').update(mode).update('\0').update(JSON.stringify(schema)).digest('hex').slice(0, 24);
}

/** The code cache stored beside a generated validator file. */
export function codeCacheFile(file: string): string {
  return file.replace(/\.cjs$/, '.v8cache');
}

/**
 * A generated CommonJS validator file as a V8 script (with its code cache when there is one).
 * Running it gives the function Node would wrap the module in.
 */
export function validatorScript(file: string, source: string, withCache = true): Script {
  let cachedData: Buffer | undefined;
  if (withCache) {
    try {
      cachedData = readFileSync(codeCacheFile(file));
    } catch {
      // no cache: compiled from source
    }
  }
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
  return new Script(wrapped, { filename: file, ...(cachedData ? { cachedData } : {}) });
}

/** Loads a generated validator file as Node would load the CommonJS module, using its code cache. */
export function runValidatorScript(script: Script, file: string): ValidateFunction {
  const module = { exports: {} as unknown };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper(module.exports, createRequire(file), module, file, dirname(file));
  return module.exports as ValidateFunction;
}

/** The build-time validator for exactly this schema and mode, if the build made one. */
export function precompiled(mode: AjvMode, schema: object, dir = PRECOMPILED_DIR): ValidateFunction | undefined {
  const file = join(dir, `${validatorKey(mode, schema)}.cjs`);
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch {
    return undefined; // not built (or unreadable): compiled at run time
  }
  return runValidatorScript(validatorScript(file, source), file);
}
