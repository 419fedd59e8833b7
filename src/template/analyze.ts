// Static checks for `tsbm validate`: template syntax (without rendering) and the root variable
// names a template reads, so validate can check each is defined for every targeted host.
import { type SourcePos, TsbmError } from '../errors.js';
import { conditionSource } from './condition.js';
import { checkCompile, HELPER_NAMES, handlebars } from './engine.js';
import { toTemplateError } from './errors.js';
import { SOFT_ARG_HELPERS } from './helpers/index.js';
import { jinjaAdvice } from './jinja.js';
import { singleMustacheIndex } from './rewrite.js';

type Expr = hbs.AST.Expression;
type Path = hbs.AST.PathExpression;

export function checkTemplateSyntax(s: string, pos: SourcePos, isCondition = false): TsbmError | undefined {
  // Ansible renders {% if %} and {% for %} wherever they are; tsbm would print them as text.
  if (/\{%-?\s*(if|elif|else|endif|for|endfor|set|raw|macro|filter|with|block)\b[\s\S]*?%\}/.test(s)) return jinjaError(s, pos, isCondition);
  if (!isCondition && !s.includes('{{')) return undefined;
  if (isCondition && s.trim() === '') return undefined;
  const source = isCondition ? conditionSource(s.trim()) : s;
  try {
    checkCompile(source, 'typed');
  } catch (e) {
    return jinjaError(s, pos, isCondition) ?? unclosedBlock(s, e, pos) ?? toTemplateError(e, { pos }, isCondition);
  }
  // `when: "{{ x }} == 'a'"` compiles, but renders to a non-empty string: always true at run time
  if (isCondition && singleMustacheIndex(handlebars().parse(source).body) < 0) {
    const advice = jinjaAdvice(s, true);
    return new TsbmError('template', `condition "${s.trim()}" mixes {{ }} with other text, so it would always be true`, {
      pos,
      hint: advice
        ? `write the whole condition as one expression, without braces: ${advice.instead}`
        : 'write the whole condition as one expression, without braces: eq x "y"',
    });
  }
  return undefined;
}

/** `{{#if x}}yes` with no `{{/if}}`: Handlebars only says it reached the end. */
function unclosedBlock(s: string, e: unknown, pos: SourcePos): TsbmError | undefined {
  if (!(e instanceof Error) || !/OPEN_ENDBLOCK', got 'EOF'/.test(e.message)) return undefined;
  const open: string[] = [];
  for (const m of s.matchAll(/\{\{~?\s*([#/])\s*([A-Za-z_][\w-]*)/g)) {
    if (m[1] === '#') open.push(m[2]!);
    else if (open[open.length - 1] === m[2]) open.pop();
  }
  const name = open.pop();
  if (!name) return undefined;
  return new TsbmError('template', `template syntax error: {{#${name}}} is never closed`, {
    pos,
    hint: `end the block with {{/${name}}}`,
  });
}

/** A template that failed to compile and looks like Jinja: say what to write instead. */
function jinjaError(s: string, pos: SourcePos, isCondition: boolean): TsbmError | undefined {
  const advice = jinjaAdvice(s, isCondition);
  if (!advice) return undefined;
  return new TsbmError(
    'template',
    `${isCondition ? 'condition' : 'template'} syntax error: Jinja-style expression ${advice.expr} (tsbm ${isCondition ? 'conditions' : 'templates'} are Handlebars)`,
    { pos, hint: `write ${advice.instead}; helpers: docs/templating.md` },
  );
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
