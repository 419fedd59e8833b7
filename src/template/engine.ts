// The one Handlebars environment tsbm renders with: strict, no HTML escaping, no prototype
// access, tsbm's helpers, and compiled templates cached by source.
import { createRequire } from 'node:module';
import { isSecretName } from '../output/redact.js';
import { UndefinedVarFail } from './fail.js';
import { resolvePath } from './lookup.js';
import { toHandlebars } from './helpers/define.js';
import { HELPERS } from './helpers/index.js';
import {
  INTERNAL,
  type RewriteMode,
  rewriteProgram,
  singleMustacheIndex,
} from './rewrite.js';
import type { TemplateContext } from './types.js';

/** Names usable as helpers in templates (ours plus Handlebars' block helpers and `lookup`). */
export const HELPER_NAMES: ReadonlySet<string> = new Set(HELPERS.map((h) => h.name));

type HandlebarsEnv = ReturnType<typeof import('handlebars').create>;
let env: HandlebarsEnv | undefined;

/**
 * The Handlebars environment, created (and Handlebars loaded) on the first template: a playbook
 * and inventory without any template never pay for it.
 */
export function handlebars(): HandlebarsEnv {
  if (!env) {
    const Handlebars = createRequire(import.meta.url)('handlebars') as typeof import('handlebars');
    numericSegmentsAsNames(Handlebars);
    env = Handlebars.create();
    registerHelpers(env);
  }
  return env;
}

interface JisonLexer {
  matched: string;
  yytext: string;
  performAction: (this: JisonLexer, yy: ParserHelpers, lexer: JisonLexer, rule: number, state: string) => unknown;
  tsbmNumericSegments?: true;
}

interface PathPart {
  part: string;
  original: string;
  separator?: string;
}

interface ParserHelpers {
  preparePath: (this: ParserHelpers, data: boolean, parts: PathPart[], loc: unknown) => unknown;
  tsbmNumericSegments?: true;
}

/** A number lexed right after a path separator: a segment (`{{ names.0 }}`, `{{ grid.1.0 }}`). */
const SEGMENT_AFTER = /[^./\s][./]$/;
const NUMERIC_SEGMENTS = /^\d+(?:\.\d+)+$/;

/**
 * `{{ names.0 }}`: Handlebars' lexer reads a number followed by `}}`, a space or `)` as a number
 * literal, so a numeric last path segment was a syntax error while `{{ disks.0.name }}` worked.
 * A number right after a path separator can only be a segment, so it is read as a name there
 * (`1.0` in `grid.1.0` as the two segments it is). Nothing that parsed before parses
 * differently: a number literal is never valid after a separator.
 */
function numericSegmentsAsNames(hb: typeof import('handlebars')): void {
  const parser = (hb as unknown as { Parser?: { lexer?: JisonLexer; symbols_?: Record<string, number> } }).Parser;
  const lexer = parser?.lexer;
  const NUMBER = parser?.symbols_?.NUMBER;
  const ID = parser?.symbols_?.ID;
  if (!lexer || NUMBER === undefined || ID === undefined || lexer.tsbmNumericSegments) return;
  const original = lexer.performAction;
  lexer.performAction = function (yy, lx, rule, state) {
    const token = original.call(this, yy, lx, rule, state);
    if (token !== NUMBER) return token;
    const before = lx.matched.slice(0, lx.matched.length - lx.yytext.length);
    if (!SEGMENT_AFTER.test(before)) return token;
    if (!yy.tsbmNumericSegments) splitNumericSegments(yy);
    return ID;
  };
  lexer.tsbmNumericSegments = true;
}

/** `1.0` became one name token: the path gets it as the segments `1` and `0`. */
function splitNumericSegments(yy: ParserHelpers): void {
  const prepare = yy.preparePath;
  yy.preparePath = function (data, parts, loc) {
    const split = parts.flatMap((p) =>
      p.part === p.original && NUMERIC_SEGMENTS.test(p.part)
        ? p.part.split('.').map((x, i) => ({ part: x, original: x, ...(i === 0 ? (p.separator ? { separator: p.separator } : {}) : { separator: '.' }) }))
        : [p],
    );
    return prepare.call(this, data, split, loc);
  };
  yy.tsbmNumericSegments = true;
}

interface RunData {
  root?: unknown;
  tsbm?: TemplateContext;
  tsbmBox?: { value?: unknown; set?: boolean };
}

function registerHelpers(hbs: HandlebarsEnv): void {
  for (const h of HELPERS) hbs.registerHelper(h.name, toHandlebars(h));
  // `log`, `helperMissing` and `blockHelperMissing` stay registered inside Handlebars, but the
  // rewrite step rejects any helper not in HELPER_NAMES, so templates cannot reach them.

  hbs.registerHelper(INTERNAL.get, function (this: unknown, original: string, ...rest: unknown[]) {
    const opts = rest.pop() as { data?: RunData };
    const parts = rest as string[];
    const value = resolvePath(this, opts.data?.root, original, parts, true);
    // A value read through a secret-looking name stays secret wherever the result goes.
    const onSecret = opts.data?.tsbm?.onSecret;
    if (onSecret && parts.some(isSecretName)) markSecret(value, onSecret);
    return value;
  });
  hbs.registerHelper(INTERNAL.soft, function (this: unknown, original: string, ...rest: unknown[]) {
    const opts = rest.pop() as { data?: RunData };
    return resolvePath(this, opts.data?.root, original, rest as string[], false);
  });
  hbs.registerHelper(INTERNAL.capture, (value: unknown, opts: { data?: RunData }) => {
    const box = opts.data?.tsbmBox;
    if (box) {
      box.value = value;
      box.set = true;
    }
    return toText(value);
  });
  hbs.registerHelper(INTERNAL.required, (value: unknown, original: string) => {
    if (value === undefined) throw new UndefinedVarFail(original, original);
    return value;
  });
  hbs.registerHelper(INTERNAL.str, (value: unknown) => toText(value));
}

function markSecret(v: unknown, onSecret: (s: string) => void, depth = 0): void {
  if (typeof v === 'string' || typeof v === 'number') onSecret(String(v));
  else if (v && typeof v === 'object' && depth < 10)
    for (const x of Object.values(v)) markSecret(x, onSecret, depth + 1);
}

/** How a value prints inside a larger string. */
function toText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export interface Compiled {
  run(vars: unknown, ctx: TemplateContext | undefined): { text: string; value?: unknown; typed: boolean };
}

const CACHE_MAX = 5000;
const cache = new Map<string, Compiled>();

/** Parse + rewrite + compile (cached). Throws Handlebars parse errors and RewriteFail as is. */
export function compileTemplate(source: string, mode: RewriteMode): Compiled {
  const key = `${mode}\u0000${source}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const hbs = handlebars();
  const ast = hbs.parse(source);
  const single = mode === 'typed' && singleMustacheIndex(ast.body) >= 0;
  rewriteProgram(ast, mode, HELPER_NAMES);
  const tpl = hbs.compile(ast, { strict: true, noEscape: true });
  const compiled: Compiled = {
    run(vars, ctx) {
      const box: { value?: unknown; set?: boolean } = {};
      const text = tpl(vars, {
        data: { tsbm: ctx, tsbmBox: box },
        allowProtoPropertiesByDefault: false,
        allowProtoMethodsByDefault: false,
      });
      return single && box.set ? { text, value: box.value, typed: true } : { text, typed: false };
    },
  };
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(key, compiled);
  return compiled;
}

/**
 * Parse, rewrite and compile to Handlebars' opcodes without running: for syntax checks. The
 * last stage (generating JavaScript) only fails on Handlebars' own bugs, and costs most of the
 * time: it is left out.
 */
export function checkCompile(source: string, mode: RewriteMode): void {
  const hbs = handlebars();
  const ast = hbs.parse(source);
  rewriteProgram(ast, mode, HELPER_NAMES);
  new (hbs as unknown as { Compiler: new () => { compile(ast: unknown, opts: object): unknown } }).Compiler().compile(
    ast,
    { strict: true, noEscape: true, knownHelpers: {}, data: true },
  );
}
