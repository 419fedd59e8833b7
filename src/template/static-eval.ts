// Evaluates templates without running a task, for `tsbm validate` and `tsbm run`'s checks: every
// variable path a template would read is followed to its last key in what is known before the
// run (inventory, vars, role defaults, extra vars), as src/template/lookup.ts would follow it.
// Values only known at run time (registered results, facts, loop items, controller files and
// environment) are UNKNOWN: nothing read through them is flagged. Conditions that can be decided
// (`defined x.y`, `eq kind "iso"`) pick the branch the run would take, so guarded reads are not
// flagged; undecidable ones keep both branches.
import { handlebars, HELPER_NAMES } from './engine.js';
import { conditionSource } from './condition.js';
import { HELPERS } from './helpers/index.js';
import type { HelperDef } from './helpers/define.js';
import { singleMustacheIndex } from './rewrite.js';
import { truthy } from './truthy.js';
import { UnsafeText } from '../util/unsafe-text.js';
import { setOwn } from '../util/own-property.js';

type Program = hbs.AST.Program;
type Expr = hbs.AST.Expression;
type Path = hbs.AST.PathExpression;

/** A value only known when the task runs. */
export const UNKNOWN: unique symbol = Symbol('unknown');
/** No such variable (or key). */
export const MISSING: unique symbol = Symbol('missing');

/**
 * A map looked up key by key (hostvars): what comes out of it is walked as is, never rendered,
 * as the executor's hostvars view hands out raw values.
 */
export interface StaticView {
  readonly staticView: true;
  get(key: string): unknown;
}

function isStaticView(v: unknown): v is StaticView {
  return typeof v === 'object' && v !== null && (v as { staticView?: unknown }).staticView === true;
}

export interface StaticScope {
  /** A root variable's raw value (templates inside it are rendered when read), UNKNOWN or MISSING. */
  root(name: string): unknown;
}

/** A read that fails at run time: `path` as written, `missing` the part that is not there. */
export interface StaticMiss {
  path: string;
  missing: string;
  /** Variables whose templated values led to this read, outermost first (`instance_iso`). */
  via: string[];
}

/** Helpers whose result depends only on their arguments (the others read the controller's world). */
const PURE: ReadonlyMap<string, HelperDef> = new Map(
  HELPERS.filter((h) => !['env', 'file', 'now', 'uuid'].includes(h.name)).map((h) => [h.name, h]),
);

const astCache = new Map<string, Program | null>();
const AST_CACHE_MAX = 5000;

/** The parsed template (shared, never modified), or null when it does not parse. */
function parsed(source: string): Program | null {
  let ast = astCache.get(source);
  if (ast !== undefined) return ast;
  try {
    ast = handlebars().parse(source);
  } catch {
    ast = null; // syntax errors are checkTemplateSyntax's job
  }
  if (astCache.size >= AST_CACHE_MAX) astCache.clear();
  astCache.set(source, ast);
  return ast;
}

/** True when `v` holds no UNKNOWN anywhere (and no view): a helper may then be run on it. */
function concrete(v: unknown, depth = 0): boolean {
  if (v === UNKNOWN || isStaticView(v)) return false;
  if (v === null || typeof v !== 'object' || depth > 20) return true;
  return Object.values(v).every((x) => concrete(x, depth + 1));
}

function hasTemplate(v: unknown, depth = 0): boolean {
  if (typeof v === 'string') return v.includes('{{');
  if (v instanceof UnsafeText) return true;
  if (depth > 20 || v === null || typeof v !== 'object' || isStaticView(v)) return false;
  return Object.values(v).some((x) => hasTemplate(x, depth + 1));
}

function toText(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

interface Ctx {
  /** Inside #each/#with: names resolve against an item first, which is not modelled. */
  shifted: boolean;
  blockParams: ReadonlySet<string>;
  via: string[];
}

const TOP: Ctx = { shifted: false, blockParams: new Set(), via: [] };

/**
 * One evaluator per (task, host): it remembers rendered variables as the executor's lazy vars
 * do, and collects every read that would fail.
 */
export class StaticEvaluator {
  readonly misses: StaticMiss[] = [];
  private readonly rendered = new Map<string, unknown>();
  private readonly busy = new Set<string>();

  constructor(private readonly scope: StaticScope) {}

  /** A template string's value as `renderString` would produce it (UNKNOWN when it depends on the run). */
  value(source: string, via: string[] = []): unknown {
    if (!source.includes('{{')) return source;
    return this.program(source, { ...TOP, via });
  }

  /** A when/until/failed_when/changed_when expression: true, false or UNKNOWN. */
  condition(expr: unknown): boolean | typeof UNKNOWN {
    if (typeof expr === 'boolean') return expr;
    if (typeof expr !== 'string') return truthy(expr);
    if (expr.trim() === '') return true;
    const v = this.program(conditionSource(expr.trim()), TOP);
    return v === UNKNOWN ? UNKNOWN : truthy(v);
  }

  /** Every string in a value (module arguments, loop), each rendered. */
  deep(v: unknown, depth = 0): unknown {
    if (typeof v === 'string') return this.value(v);
    if (v instanceof UnsafeText) return v.text;
    if (v === null || typeof v !== 'object' || depth > 64) return v;
    if (Array.isArray(v)) return v.map((x) => this.deep(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) setOwn(out, k, this.deep(x, depth + 1));
    return out;
  }

  private program(source: string, ctx: Ctx): unknown {
    const ast = parsed(source);
    if (!ast) return UNKNOWN;
    const single = singleMustacheIndex(ast.body);
    if (single >= 0) {
      const v = this.mustache(ast.body[single] as hbs.AST.MustacheStatement, ctx);
      return v === MISSING ? undefined : v;
    }
    return this.body(ast, ctx);
  }

  /** A body rendered to text; UNKNOWN as soon as one part is. */
  private body(prog: Program, ctx: Ctx): unknown {
    let text = '';
    let known = true;
    for (const st of prog.body) {
      let part: unknown;
      if (st.type === 'ContentStatement') part = (st as hbs.AST.ContentStatement).value;
      else if (st.type === 'MustacheStatement') part = this.mustache(st as hbs.AST.MustacheStatement, ctx);
      else if (st.type === 'BlockStatement') part = this.block(st as hbs.AST.BlockStatement, ctx);
      else continue;
      if (part === UNKNOWN || !concrete(part)) known = false;
      else if (known) text += toText(part);
    }
    return known ? text : UNKNOWN;
  }

  private block(b: hbs.AST.BlockStatement, ctx: Ctx): unknown {
    const name = b.path.original;
    const args = b.params.map((p) => this.expr(p, ctx));
    const inner = (p: Program | undefined, shifted: boolean): unknown => {
      if (!p) return '';
      const blockParams = new Set([...ctx.blockParams, ...(p.blockParams ?? [])]);
      return this.body(p, { ...ctx, blockParams, shifted: ctx.shifted || shifted });
    };
    if (name === 'if' || name === 'unless') {
      const c = args[0];
      if (c === UNKNOWN || isStaticView(c)) {
        inner(b.program, false);
        inner(b.inverse, false);
        return UNKNOWN;
      }
      const yes = truthy(c) !== (name === 'unless');
      return inner(yes ? b.program : b.inverse, false);
    }
    // #each / #with: the body reads the item first, which is not modelled here.
    inner(b.program, true);
    inner(b.inverse, false);
    return UNKNOWN;
  }

  private mustache(m: hbs.AST.MustacheStatement, ctx: Ctx): unknown {
    if (m.path.type !== 'PathExpression') return this.expr(m.path as Expr, ctx);
    const p = m.path as Path;
    if (this.isCall(p, m.params, m.hash)) return this.call(p.original, m.params, m.hash, ctx);
    return this.lookup(p, ctx, true);
  }

  private isCall(p: Path, params: Expr[], hash: hbs.AST.Hash | undefined): boolean {
    if (p.data) return false;
    if (params.length > 0 || (hash?.pairs.length ?? 0) > 0) return true;
    return p.parts.length === 1 && p.depth === 0 && HELPER_NAMES.has(p.original);
  }

  private expr(e: Expr, ctx: Ctx): unknown {
    switch (e.type) {
      case 'PathExpression':
        return this.lookup(e as Path, ctx, true);
      case 'SubExpression': {
        const s = e as hbs.AST.SubExpression;
        const p = s.path as Path;
        if (!this.isCall(p, s.params, s.hash)) return this.lookup(p, ctx, true);
        return this.call(p.original, s.params, s.hash, ctx);
      }
      case 'StringLiteral':
      case 'NumberLiteral':
      case 'BooleanLiteral':
        return (e as hbs.AST.StringLiteral).value;
      case 'NullLiteral':
        return null;
      default:
        return undefined; // UndefinedLiteral
    }
  }

  private call(name: string, params: Expr[], hash: hbs.AST.Hash | undefined, ctx: Ctx): unknown {
    const soft = name === 'defined' || name === 'default';
    const args = params.map((p) =>
      soft && p.type === 'PathExpression' ? this.lookup(p as Path, ctx, false) : this.expr(p, ctx),
    );
    const hashArgs: Record<string, unknown> = {};
    for (const pair of hash?.pairs ?? []) hashArgs[pair.key] = this.expr(pair.value, ctx);
    const vals = args.map((a) => (a === MISSING ? undefined : a));
    switch (name) {
      case 'defined':
        return vals[0] === UNKNOWN ? UNKNOWN : vals[0] !== undefined;
      case 'default': {
        const [v, fallback] = vals;
        if (v === UNKNOWN) return UNKNOWN;
        if (v === undefined || v === null) return fallback;
        if (vals[2] === true) return concrete(v) ? (truthy(v) ? v : fallback) : UNKNOWN;
        return v;
      }
      case 'and':
        if (vals.some((v) => concrete(v) && !truthy(v))) return false;
        break;
      case 'or':
        if (vals.some((v) => concrete(v) && truthy(v))) return true;
        break;
      case 'secret':
        return vals[0];
    }
    const helper = PURE.get(name);
    if (!helper || !vals.every((v) => concrete(v)) || !concrete(hashArgs)) return UNKNOWN;
    try {
      return helper.fn(vals, undefined, hashArgs);
    } catch {
      return UNKNOWN; // a helper refusing its input is not what these checks look for
    }
  }

  /** Resolves a path as src/template/lookup.ts does; a strict read that fails is recorded. */
  private lookup(p: Path, ctx: Ctx, strict: boolean): unknown {
    if (p.data || p.depth > 0 || p.parts.length === 0 || ctx.shifted) return UNKNOWN;
    const parts = p.parts;
    if (ctx.blockParams.has(parts[0]!)) return UNKNOWN;
    let cur = this.read(parts[0]!, ctx.via);
    for (let i = 1; ; i++) {
      if (cur === UNKNOWN) return UNKNOWN;
      if (cur === MISSING) {
        if (!strict) return MISSING;
        this.misses.push({ path: p.original, missing: parts.slice(0, i).join('.'), via: ctx.via });
        return UNKNOWN;
      }
      if (i === parts.length) return cur;
      cur = step(cur, parts[i]!);
    }
  }

  /** A root variable, rendered the way the executor's lazy vars render it (whole value, once). */
  private read(name: string, via: string[]): unknown {
    if (this.rendered.has(name)) return this.rendered.get(name);
    const raw = this.scope.root(name);
    if (raw === UNKNOWN || raw === MISSING || !hasTemplate(raw)) return raw;
    if (this.busy.has(name)) return UNKNOWN; // refers to itself: the run reports that itself
    this.busy.add(name);
    try {
      const v = this.renderRaw(raw, [...via, name]);
      this.rendered.set(name, v);
      return v;
    } finally {
      this.busy.delete(name);
    }
  }

  private renderRaw(v: unknown, via: string[], depth = 0): unknown {
    if (typeof v === 'string') return v.includes('{{') ? this.program(v, { ...TOP, via }) : v;
    if (v instanceof UnsafeText) return v.text;
    if (v === null || typeof v !== 'object' || depth > 64 || isStaticView(v)) return v;
    if (Array.isArray(v)) return v.map((x) => this.renderRaw(x, via, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) setOwn(out, k, this.renderRaw(x, via, depth + 1));
    return out;
  }
}

/** One key further, as src/template/lookup.ts steps (own properties only, `length` of strings). */
function step(obj: unknown, key: string): unknown {
  if (obj === UNKNOWN) return UNKNOWN;
  if (obj instanceof UnsafeText) return key === 'length' ? obj.text.length : MISSING;
  if (isStaticView(obj)) return obj.get(key);
  if (obj === null || obj === undefined) return MISSING;
  if (typeof obj === 'string') return key === 'length' ? obj.length : MISSING;
  if (typeof obj !== 'object') return MISSING;
  if (obj instanceof Map) return obj.has(key) ? obj.get(key) : MISSING;
  return Object.hasOwn(obj, key) ? (obj as Record<string, unknown>)[key] : MISSING;
}

/** The message the run would give for a miss (src/template/fail.ts UndefinedVarFail). */
export function missMessage(m: StaticMiss): string {
  return m.path === m.missing
    ? `undefined variable "${m.path}"`
    : `undefined variable "${m.path}" ("${m.missing}" is not defined)`;
}
