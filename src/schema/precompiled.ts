// Validators compiled at build time (`npm run build` runs dist/schema/precompile.js, which
// writes dist/validators/<key>.cjs with ajv's standalone code). Compiling the playbook and
// module schemas at run time costs a `tsbm run` more than its SSH work on a small fleet.
// A validator is found by a hash of the exact JSON schema and the ajv mode, so a stale or
// missing file can only miss, never validate against an old schema: a miss (tests run from
// src/, ad-hoc schemas, a build without the step) is compiled at run time as before.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';

/** `plain` validates as written; `coerce` also converts "5"/"true" (module arguments at run time). */
export type AjvMode = 'plain' | 'coerce';

/** Where the build puts the generated validators, relative to this file (dist/schema/). */
export const PRECOMPILED_DIR = join(import.meta.dirname, '..', 'validators');

const load = createRequire(import.meta.url);

/** The file name a schema's validator is stored under (stable across processes). */
export function validatorKey(mode: AjvMode, schema: object): string {
  return createHash('sha256').update(mode).update('\0').update(JSON.stringify(schema)).digest('hex').slice(0, 24);
}

/** The build-time validator for exactly this schema and mode, if the build made one. */
export function precompiled(mode: AjvMode, schema: object, dir = PRECOMPILED_DIR): ValidateFunction | undefined {
  const file = join(dir, `${validatorKey(mode, schema)}.cjs`);
  if (!existsSync(file)) return undefined;
  return load(file) as ValidateFunction;
}
