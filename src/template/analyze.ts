// Static checks for `tsbm validate`: template syntax (without rendering) and the root variable
// names a template reads, so validate can check each is defined for every targeted host.
import type { SourcePos } from '../errors.js';
import type { TsbmError } from '../errors.js';
import { conditionSource } from './condition.js';
import { checkCompile, HELPER_NAMES, handlebars } from './engine.js';
import { toTemplateError } from './errors.js';
import { SOFT_ARG_HELPERS } from './helpers/index.js';

type Expr = hbs.AST.Expression;
type Path = hbs.AST.PathExpression;

export function checkTemplateSyntax(s: string, pos: SourcePos, isCondition = false): TsbmError | undefined {
  if (!isCondition && !s.includes('{{')) return undefined;
  try {
    checkCompile(isCondition ? conditionSource(s.trim()) : s, 'typed');
    return undefined;
  } catch (e) {
    return toTemplateError(e, { pos }, isCondition);
  }
}

interface Scope {
  blockParams: ReadonlySet<string>;
  /** Inside #each/#with the context is no longer the root vars. */
  shifted: boolean;
}

function collect(prog: hbs.AST.Program, scope: Scope, out: Set<string>): void {
  const addPath = (p: Path): void => {
    if (p.data) {
      if (p.parts[0] === 'root' && p.original.startsWith('@root.') && p.parts.length > 1)
        out.add(p.parts[1]!);
      return;
    }
    if (p.depth > 0 || p.parts.length === 0 || scope.shifted) return;
    if (scope.blockParams.has(p.parts[0]!)) return;
    out.add(p.parts[0]!);
  };
  const isHelperName = (p: Path): boolean => p.parts.length === 1 && HELPER_NAMES.has(p.original);
  const call = (name: string, params: Expr[], hash: hbs.AST.Hash | undefined): void => {
    for (const p of params) {
      if (SOFT_ARG_HELPERS.has(name) && p.type === 'PathExpression') continue;
      expr(p);
    }
    for (const pair of hash?.pairs ?? []) expr(pair.value);
  };
  const expr = (e: Expr): void => {
    if (e.type === 'PathExpression') addPath(e as Path);
    else if (e.type === 'SubExpression') {
      const s = e as hbs.AST.SubExpression;
      if (s.params.length === 0 && !(s.hash?.pairs.length ?? 0) && !isHelperName(s.path)) addPath(s.path);
      else call(s.path.original, s.params, s.hash);
    }
  };
  for (const st of prog.body) {
    if (st.type === 'MustacheStatement') {
      const m = st as hbs.AST.MustacheStatement;
      if (m.path.type !== 'PathExpression') continue;
      const p = m.path as Path;
      if (m.params.length === 0 && !(m.hash?.pairs.length ?? 0) && !isHelperName(p)) addPath(p);
      else call(p.original, m.params, m.hash);
    } else if (st.type === 'BlockStatement') {
      const b = st as hbs.AST.BlockStatement;
      call(b.path.original, b.params, b.hash);
      const shifts = b.path.original === 'each' || b.path.original === 'with';
      const inner = (p: hbs.AST.Program | undefined, shifted: boolean): void => {
        if (!p) return;
        const blockParams = new Set([...scope.blockParams, ...(p.blockParams ?? [])]);
        collect(p, { blockParams, shifted: scope.shifted || shifted }, out);
      };
      inner(b.program, shifts);
      inner(b.inverse, false);
    }
  }
}

function refs(source: string): string[] {
  let ast: hbs.AST.Program;
  try {
    ast = handlebars().parse(source);
  } catch {
    return []; // syntax errors are checkTemplateSyntax's job
  }
  const out = new Set<string>();
  collect(ast, { blockParams: new Set(), shifted: false }, out);
  return [...out];
}

/** Root variable names a template reads (not helpers, `this`, `@index`, block params, literals). */
export function referencedVars(s: string): string[] {
  return s.includes('{{') ? refs(s) : [];
}

/** Same for a when/until/failed_when/changed_when expression, with or without braces. */
export function referencedVarsInCondition(s: string | boolean): string[] {
  if (typeof s !== 'string' || s.trim() === '') return [];
  return refs(conditionSource(s.trim()));
}
