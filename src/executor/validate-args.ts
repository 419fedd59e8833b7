// Validates rendered module arguments against the module's schema (strict: templates are
// already rendered here), naming the task's file:line:col on failure.
import type { ValidateFunction } from 'ajv';
import { TsbmError } from '../errors.js';
import type { ModuleDef } from '../module-api/types.js';
import type { Task } from '../playbook/model.js';
import { argsSchemaJson, validatorForJson } from '../schema/ajv.js';

const cache = new WeakMap<object, ValidateFunction>();
const coercingCache = new WeakMap<object, ValidateFunction>();

function validatorFor(m: ModuleDef, coerce: boolean): ValidateFunction {
  const c = coerce ? coercingCache : cache;
  let v = c.get(m.args);
  if (!v) {
    v = validatorForJson(coerce ? 'coerce' : 'plain', argsSchemaJson(m.args));
    c.set(m.args, v);
  }
  return v;
}

/** Validates `args` in place: strings that stand for numbers or booleans are converted. */
export function validateArgs(m: ModuleDef, args: unknown, task: Task, host: string): void {
  const v = validatorFor(m, false);
  if (v(args)) return;
  // Try the Ansible-style conversion on a copy first, so a failure reports the original value.
  const coercing = validatorFor(m, true);
  if (coercing(structuredClone(args))) {
    coercing(args);
    return;
  }
  const e = v.errors?.[0];
  const where = e?.instancePath ? `argument ${e.instancePath.slice(1).replace(/\//g, '.')}` : 'arguments';
  let detail = e?.message ?? 'invalid';
  if (e?.keyword === 'additionalProperties') detail = `unknown argument '${String(e.params.additionalProperty)}'`;
  if (e?.keyword === 'required') detail = `missing required argument '${String(e.params.missingProperty)}'`;
  const msg = e?.keyword === 'additionalProperties' || e?.keyword === 'required' ? detail : `${where} ${detail}`;
  throw new TsbmError('runtime', `${m.name}: ${msg}`, {
    pos: task.argsPos,
    host,
    task: task.name ?? m.name,
    hint: `see \`tsbm modules ${m.name}\` for its arguments`,
  });
}
