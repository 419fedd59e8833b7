// Rewrites a parsed Handlebars template before compiling it, so that tsbm, not Handlebars,
// decides what a variable means:
//  - every variable path becomes `(__tsbm_v "a.b" "a" "b")`, which throws a precise
//    "undefined variable" error (Handlebars' strict mode does not cover helper arguments);
//  - direct variable arguments of `defined` and `default` become `__tsbm_soft` lookups that
//    tolerate a missing path;
//  - each `{{ }}` output is wrapped in `__tsbm_str` (lists/maps print as JSON), or, for a
//    value that is one expression, `__tsbm_cap`, which hands back the typed value.
// Unknown helpers, partials and decorators are rejected here, before anything runs.
import { SOFT_ARG_HELPERS } from './helpers/index.js';

type Node = hbs.AST.Node;
type Expr = hbs.AST.Expression;
type Path = hbs.AST.PathExpression;
type Sub = hbs.AST.SubExpression;
type Mustache = hbs.AST.MustacheStatement;
type Block = hbs.AST.BlockStatement;
type Program = hbs.AST.Program;

export const INTERNAL = {
  get: '__tsbm_v',
  soft: '__tsbm_soft',
  capture: '__tsbm_cap',
  str: '__tsbm_str',
  required: '__tsbm_req',
} as const;

/** Handlebars' own helpers tsbm keeps. */
const BUILTIN_BLOCKS: ReadonlySet<string> = new Set(['if', 'unless', 'each', 'with']);
const BUILTIN_INLINE: ReadonlySet<string> = new Set(['lookup']);

export class RewriteFail extends Error {
  constructor(
    message: string,
    readonly loc: hbs.AST.SourceLocation | undefined,
    readonly hint?: string,
  ) {
    super(message);
  }
}

export type RewriteMode = 'string' | 'typed';

interface Env {
  helpers: ReadonlySet<string>;
  blockParams: ReadonlySet<string>;
  /** How many context-changing blocks (#each, #with) enclose this point: the limit for ../ */
  blockDepth: number;
}

const path = (name: string, loc: hbs.AST.SourceLocation): Path =>
  ({ type: 'PathExpression', data: false, depth: 0, parts: [name], original: name, loc }) as Path;
const strLit = (value: string, loc: hbs.AST.SourceLocation): Expr =>
  ({ type: 'StringLiteral', value, original: value, loc }) as hbs.AST.StringLiteral;
const emptyHash = (loc: hbs.AST.SourceLocation): hbs.AST.Hash =>
  ({ type: 'Hash', pairs: [], loc }) as hbs.AST.Hash;
const sub = (name: string, params: Expr[], loc: hbs.AST.SourceLocation): Sub =>
  ({ type: 'SubExpression', path: path(name, loc), params, hash: emptyHash(loc), loc }) as Sub;

function isPath(n: Node): n is Path {
  return n.type === 'PathExpression';
}

/** Variables that this expression reads as plain values (as opposed to data vars, ../, block params). */
function isRewritableVar(p: Path, env: Env): boolean {
  if (p.data || p.depth > 0 || p.parts.length === 0) return false;
  return !env.blockParams.has(p.parts[0]!);
}

function lookupExpr(p: Path, env: Env, soft: boolean): Expr {
  if (p.depth > env.blockDepth)
    throw new RewriteFail(
      `"${p.original}" reaches above the host's variables`,
      p.loc,
      '../ is only for reaching out of #each or #with blocks',
    );
  // ../x is resolved by Handlebars (helpers cannot see parent contexts); only its absence is checked.
  if (p.depth > 0 && !p.data) return soft ? p : sub(INTERNAL.required, [p, strLit(p.original, p.loc)], p.loc);
  if (!isRewritableVar(p, env)) return p;
  const args = [strLit(p.original, p.loc), ...p.parts.map((x) => strLit(x, p.loc))];
  return sub(soft ? INTERNAL.soft : INTERNAL.get, args, p.loc);
}

function isCall(node: { path: Node; params: Expr[]; hash: hbs.AST.Hash }, env: Env): boolean {
  if (!isPath(node.path) || node.path.data) return false;
  if (node.params.length > 0 || (node.hash?.pairs.length ?? 0) > 0) return true;
  return node.path.parts.length === 1 && node.path.depth === 0 && env.helpers.has(node.path.original);
}

function checkHelper(p: Node, env: Env): void {
  const name = isPath(p) ? p.original : String((p as hbs.AST.StringLiteral).value);
  if (
    isPath(p) &&
    p.parts.length === 1 &&
    p.depth === 0 &&
    (env.helpers.has(name) || BUILTIN_INLINE.has(name))
  )
    return;
  throw new RewriteFail(`unknown helper "${name}"`, p.loc, 'see docs/templating.md for the helpers tsbm has');
}

function rewriteCallArgs(name: string, params: Expr[], hash: hbs.AST.Hash, env: Env): void {
  const soft = SOFT_ARG_HELPERS.has(name);
  for (let i = 0; i < params.length; i++) {
    const p = params[i]!;
    params[i] = soft && isPath(p) ? lookupExpr(p, env, true) : rewriteExpr(p, env);
  }
  for (const pair of hash?.pairs ?? []) pair.value = rewriteExpr(pair.value, env);
}

function rewriteExpr(e: Expr, env: Env): Expr {
  if (isPath(e)) return lookupExpr(e, env, false);
  if (e.type === 'SubExpression') {
    const s = e as Sub;
    if (!isCall(s, env)) return lookupExpr(s.path, env, false);
    checkHelper(s.path, env);
    rewriteCallArgs(s.path.original, s.params, s.hash, env);
    return s;
  }
  return e; // literals
}

/** The value a mustache produces, as one expression. */
function mustacheValue(m: Mustache, env: Env): Expr {
  if (m.path.type !== 'PathExpression') return m.path; // {{"literal"}} / {{1}}
  if (!isCall(m as { path: Node; params: Expr[]; hash: hbs.AST.Hash }, env))
    return lookupExpr(m.path as Path, env, false);
  checkHelper(m.path, env);
  const p = m.path as Path;
  rewriteCallArgs(p.original, m.params, m.hash, env);
  return { type: 'SubExpression', path: p, params: m.params, hash: m.hash, loc: m.loc } as Sub;
}

function wrap(m: Mustache, helper: string, env: Env): Mustache {
  const value = mustacheValue(m, env);
  return { ...m, path: path(helper, m.loc), params: [value], hash: emptyHash(m.loc) } as Mustache;
}

function rewriteBody(body: hbs.AST.Statement[], env: Env, single: number): hbs.AST.Statement[] {
  return body.map((st, i) => {
    switch (st.type) {
      case 'MustacheStatement':
        return wrap(st as Mustache, i === single ? INTERNAL.capture : INTERNAL.str, env);
      case 'BlockStatement': {
        const b = st as Block;
        const name = b.path.original;
        if (!BUILTIN_BLOCKS.has(name) || b.path.parts.length !== 1)
          throw new RewriteFail(
            `unknown block helper "#${name}"`,
            b.path.loc,
            'blocks tsbm has: #if, #unless, #each, #with',
          );
        rewriteCallArgs(name, b.params, b.hash, env);
        const inner = (prog: Program | undefined): Program | undefined => {
          if (!prog) return prog;
          const params = new Set([...env.blockParams, ...(prog.blockParams ?? [])]);
          const shifts = name === 'each' || name === 'with';
          const blockDepth = env.blockDepth + (shifts && prog === b.program ? 1 : 0);
          return { ...prog, body: rewriteBody(prog.body, { ...env, blockParams: params, blockDepth }, -1) };
        };
        return { ...b, program: inner(b.program), inverse: inner(b.inverse) } as Block;
      }
      case 'ContentStatement':
      case 'CommentStatement':
        return st;
      case 'PartialStatement':
      case 'PartialBlockStatement':
        throw new RewriteFail('partials ({{> name}}) are not supported', st.loc);
      default:
        throw new RewriteFail(`${st.type} is not supported in tsbm templates`, st.loc);
    }
  });
}

/** Index of the lone mustache in a body made of one mustache and whitespace, else -1. */
export function singleMustacheIndex(body: readonly hbs.AST.Statement[]): number {
  let found = -1;
  for (let i = 0; i < body.length; i++) {
    const st = body[i]!;
    if (st.type === 'MustacheStatement' && found < 0) found = i;
    else if (!(st.type === 'ContentStatement' && (st as hbs.AST.ContentStatement).value.trim() === ''))
      return -1;
  }
  return found;
}

/** Rewrite a freshly parsed program (it is modified in place and returned). */
export function rewriteProgram(prog: Program, mode: RewriteMode, helpers: ReadonlySet<string>): Program {
  const env: Env = { helpers, blockParams: new Set(), blockDepth: 0 };
  const single = mode === 'typed' ? singleMustacheIndex(prog.body) : -1;
  prog.body = rewriteBody(prog.body, env, single);
  return prog;
}
