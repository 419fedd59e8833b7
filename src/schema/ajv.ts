// Ajv setup (one instance per mode, or validators compiled at build time, see precompiled.ts):
// validators are cached per schema object, and a failed validation becomes a TsbmError pointing at the offending YAML node with a message an
// operator understands (not a JSON pointer).
import { createRequire } from 'node:module';
import type { TSchema } from '@sinclair/typebox';
import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';
import { parseError, type TsbmError } from '../errors.js';
import { isSecretName, MASK } from '../output/redact.js';
import { suggestion } from './did-you-mean.js';
import { type AjvMode, precompiled } from './precompiled.js';
import { relaxForTemplates, TEMPLATE_STRING } from './template-relax.js';
import type { PathSeg, YamlSource } from './yaml-source.js';

type FormatsPlugin = (ajv: Ajv) => Ajv;

/** The options of each mode; the build-time compiler (precompile.ts) uses the same ones. */
function ajvOptions(mode: AjvMode): Options {
  return {
    allErrors: false,
    strict: true,
    allowUnionTypes: true,
    verbose: true,
    ...(mode === 'coerce' ? { coerceTypes: true } : {}),
    code: { optimize: false },
  };
}

/**
 * A new Ajv instance for `mode`, with formats. ajv is loaded on first use only: a run whose
 * validators were all compiled at build time never loads it.
 */
export function newAjv(mode: AjvMode, extra: Options = {}): Ajv {
  const load = createRequire(import.meta.url);
  const { Ajv: AjvClass } = load('ajv') as typeof import('ajv');
  const formats = load('ajv-formats') as { default?: FormatsPlugin } & FormatsPlugin;
  // ajv-formats is CommonJS; depending on the loader its function is the default or `.default`.
  const addFormats: FormatsPlugin = formats.default ?? formats;
  const base = ajvOptions(mode);
  const ajv = new AjvClass({ ...base, ...extra, code: { ...base.code, ...extra.code } });
  addFormats(ajv);
  return ajv;
}

const instances = new Map<AjvMode, Ajv>();

function ajvFor(mode: AjvMode): Ajv {
  let a = instances.get(mode);
  if (!a) {
    a = newAjv(mode);
    instances.set(mode, a);
  }
  return a;
}

/** The JSON schema the loader validates a definition with: templates allowed for typed values. */
export function loaderSchemaJson(schema: TSchema): Record<string, unknown> {
  const relaxed = relaxForTemplates(JSON.parse(JSON.stringify(schema))) as Record<string, unknown>;
  delete relaxed.$id; // the same published schema may be compiled more than once under test
  return relaxed;
}

/** The JSON schema rendered module arguments are validated with (strict: templates are rendered). */
export function argsSchemaJson(schema: TSchema): Record<string, unknown> {
  const plain = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  delete plain.$id; // the schema writer may publish the same object under an $id
  return plain;
}

/** A validator for a JSON schema: the one compiled at build time if there is one, else compiled now. */
export function validatorForJson(mode: AjvMode, json: Record<string, unknown>): ValidateFunction {
  return precompiled(mode, json) ?? ajvFor(mode).compile(json);
}

const cache = new WeakMap<object, ValidateFunction>();

/** Compiles (once per schema object) a validator that also accepts template strings for typed values. */
export function compile(schema: TSchema): ValidateFunction {
  let v = cache.get(schema);
  if (!v) {
    v = validatorForJson('plain', loaderSchemaJson(schema));
    cache.set(schema, v);
  }
  return v;
}

export interface ValidateOptions {
  /** What a required key is called in messages: "key" (default) or "argument" for module args. */
  noun?: string;
}

/** Validates `value` (found at `basePath` in `src`); returns a positioned parse error for the first problem. */
export function checkAt(
  schema: TSchema,
  value: unknown,
  src: YamlSource,
  basePath: PathSeg[],
  what: string,
  opts: ValidateOptions = {},
): TsbmError | undefined {
  const validate = compile(schema);
  if (validate(value)) return undefined;
  const errors = validate.errors ?? [];
  return describe(pickError(errors), errors, value, src, basePath, what, opts);
}

/**
 * The most useful error: the deepest one (a union's matching branch gets further into the
 * value), preferring a specific complaint over a bare type mismatch from another branch.
 */
function pickError(errors: ErrorObject[]): ErrorObject {
  const real = errors.filter((e) => e.keyword !== 'anyOf' && !isTemplateBranch(e));
  if (real.length === 0) return errors[0]!;
  const depth = (e: ErrorObject) => (e.instancePath === '' ? 0 : e.instancePath.split('/').length);
  const max = Math.max(...real.map(depth));
  const deepest = real.filter((e) => depth(e) === max);
  return deepest.find((e) => e.keyword !== 'type') ?? deepest[0]!;
}

function isTemplateBranch(e: ErrorObject): boolean {
  const ps = e.parentSchema as Record<string, unknown> | undefined;
  return ps?.type === TEMPLATE_STRING.type && ps?.pattern === TEMPLATE_STRING.pattern;
}

function pointerToPath(pointer: string): PathSeg[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function valueAt(value: unknown, path: PathSeg[]): unknown {
  let v = value;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[String(seg)];
  }
  return v;
}

/** Text from a file made safe for one terminal line: control characters shown as `?`, long text cut. */
export function printable(s: string, max = 100): string {
  const clean = s.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return clean.length > max ? `${clean.slice(0, max)}...` : clean;
}

/** A short, printable rendering of a value for messages (long or hostile strings are cut). */
function showValue(v: unknown): string {
  const kind = v === null ? 'null' : Array.isArray(v) ? 'list' : typeof v === 'object' ? 'mapping' : typeof v;
  if (typeof v === 'string') return `string "${printable(v, 40)}"`;
  if (typeof v === 'number' || typeof v === 'boolean') return `${kind} ${String(v)}`;
  return kind;
}

/** How a value at a path is named: `"retries"`, or `item 2 of "tags"`. */
function nameOf(path: PathSeg[], what: string): string {
  const last = path[path.length - 1];
  if (last === undefined) return what;
  if (typeof last === 'number') {
    const parent = path[path.length - 2];
    return parent === undefined ? `item ${last + 1}` : `item ${last + 1} of "${String(parent)}"`;
  }
  return `"${last}"`;
}

const TYPE_NAMES: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean (true/false)',
  object: 'a mapping',
  array: 'a list',
  null: 'null',
};

/** "null" is allowed for "leave it empty"; it is not worth naming next to real types. */
function withoutNull(types: string[]): string[] {
  const uniq = [...new Set(types)];
  const real = uniq.filter((t) => t !== 'null');
  return real.length > 0 ? real : uniq;
}

function typeText(t: unknown): string {
  const list = Array.isArray(t) ? t : [t];
  const names = list.map((x) => TYPE_NAMES[String(x)] ?? String(x));
  return names.length <= 2
    ? names.join(' or ')
    : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}

function describe(
  e: ErrorObject,
  all: ErrorObject[],
  value: unknown,
  src: YamlSource,
  basePath: PathSeg[],
  what: string,
  opts: ValidateOptions,
): TsbmError {
  const rel = pointerToPath(e.instancePath);
  const path = [...basePath, ...rel];
  const name = nameOf(path, what);
  // A mistyped password must not end up in a CI log: values under secret-looking keys are masked.
  const secret = path.some((seg) => typeof seg === 'string' && isSecretName(seg));
  const here = valueAt(value, rel);
  const shown =
    secret && here !== null && typeof here !== 'object' ? `${typeof here} ${MASK}` : showValue(here);
  const where = rel.length > 0 ? ` in ${what}` : '';
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = printable(String(p.additionalProperty));
      const schemaProps = Object.keys(
        (e.parentSchema as { properties?: object } | undefined)?.properties ?? {},
      );
      const inner = rel.length > 0 ? ` in ${name} of ${what}` : ` in ${what}`;
      return parseError(
        `unknown key "${key}"${inner}${suggestion(key, schemaProps)}`,
        src.keyPos([...path, key]),
        schemaProps.length > 0 ? `allowed keys: ${schemaProps.join(', ')}` : 'remove it',
      );
    }
    case 'required': {
      const key = String(p.missingProperty);
      const noun = opts.noun ?? 'key';
      const inner = rel.length > 0 ? ` in ${name} of ${what}` : ` for ${what}`;
      return parseError(`missing required ${noun} "${key}"${inner}`, src.pos(path), `add "${key}: ..."`);
    }
    case 'type': {
      // A union (string, boolean or list) fails once per branch: name every allowed type.
      const types = all
        .filter((x) => x.keyword === 'type' && x.instancePath === e.instancePath && !isTemplateBranch(x))
        .flatMap((x) => (Array.isArray(x.params.type) ? x.params.type : [x.params.type]) as string[]);
      return parseError(
        `${name} must be ${typeText(withoutNull(types.length > 0 ? types : [p.type as string]))}, got ${shown}${where}`,
        src.pos(path),
        here === null ? 'a key with nothing after the colon is null; give it a value' : undefined,
      );
    }
    case 'enum':
      return parseError(
        `${name} must be one of ${(p.allowedValues as unknown[]).map((x) => JSON.stringify(x)).join(', ')}, got ${shown}${where}`,
        src.pos(path),
      );
    case 'const': {
      // A TypeBox union of literals compiles to anyOf of consts: gather them into one list.
      const allowed = all
        .filter((x) => x.keyword === 'const' && x.instancePath === e.instancePath)
        .map((x) => JSON.stringify((x.params as { allowedValue: unknown }).allowedValue));
      return parseError(
        `${name} must be one of ${[...new Set(allowed)].join(', ')}, got ${shown}${where}`,
        src.pos(path),
      );
    }
    default:
      return parseError(`${name} ${e.message ?? 'is invalid'}, got ${shown}${where}`, src.pos(path));
  }
}
