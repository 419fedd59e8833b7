// Ansible users write Jinja out of habit: `{{ x | upper }}`, `when: x == "a"`, `x is defined`.
// Handlebars' own parse errors for those ("unexpected close block params") do not say what to
// write instead. This recognises the common forms in a template that did not compile and
// suggests the tsbm helper for each. Only consulted after a failure, so valid templates are
// never second-guessed.

import { JINJA_FILTERS, jinjaToHandlebars } from './jinja-expr.js';

export interface JinjaAdvice {
  /** The offending expression, as written. */
  expr: string;
  /** What to write instead (a bare expression for conditions, `{{ ... }}` otherwise). */
  instead: string;
}

/**
 * Filters only advice knows, beyond the exact ones (jinja-expr.ts): a close helper to look at,
 * not a rewrite that means the same (Ansible's `int` converts; tsbm keeps the value as it is).
 */
const LOOSE_FILTERS: Readonly<Record<string, (x: string, a: string[]) => string>> = {
  quote: (x) => `quote ${x}`,
  bool: (x) => x,
  int: (x) => x,
  float: (x) => x,
  string: (x) => x,
  replace: (x, a) => `replace ${x} ${a.join(' ')}`,
};

/** `a, 'b'` -> [`a`, `'b'`]: a filter's arguments, split at top-level commas. */
const filterArgs = (args: string): string[] => (args ? args.split(/\s*,\s*(?=(?:[^'"]*['"][^'"]*['"])*[^'"]*$)/) : []);

/** `a['b']`, `a["b"]` -> `a.b` (Handlebars has no subscripts). */
function operand(s: string): string {
  return s.trim().replace(/\[\s*(['"])([A-Za-z_][\w-]*)\1\s*\]/g, '.$2');
}

function adviseOne(inner: string): string | undefined {
  const e = inner.trim();
  if (e === '' || e.startsWith('#') || e.startsWith('/') || e.startsWith('!')) return undefined;
  // Operators, tests and known filters, with Jinja's precedence (jinja-expr.ts).
  const exact = jinjaToHandlebars(e);
  if (exact !== undefined) return exact === e ? undefined : exact;
  let m = /^(.+?)\s+if\s+(.+?)\s+else\s+(.+)$/.exec(e);
  if (m) {
    const [a, c, b] = [m[1]!, m[2]!, m[3]!].map((x) => jinjaToHandlebars(x.trim()));
    return a && c && b ? `{{#if ${c}}}{{ ${a} }}{{else}}{{ ${b} }}{{/if}}` : undefined;
  }
  // A filter without a tsbm helper: name it as the helper to look for.
  const chain = e.split(/\s*\|\s*/);
  if (chain.length > 1 && !/\b(and|or|not|is|in)\b|[=<>!]/.test(e) && chain.slice(1).every((f) => /^[A-Za-z_]\w*\s*(\(.*\))?$/.test(f))) {
    let x = operand(chain[0]!);
    for (const f of chain.slice(1)) {
      const [, name, args] = /^([A-Za-z_]\w*)\s*(?:\((.*)\))?$/.exec(f)!;
      const wrapped = /\s/.test(x) ? `(${x})` : x;
      const a = filterArgs((args ?? '').trim());
      x = JINJA_FILTERS[name!]?.(wrapped, a) ?? LOOSE_FILTERS[name!]?.(wrapped, a) ?? `${name} ${wrapped}`;
    }
    return x;
  }
  m = /^([A-Za-z_][\w.]*)\.(upper|lower|strip)\(\)$/.exec(e);
  if (m) return `${m[2] === 'strip' ? 'trim' : m[2]} ${m[1]}`;
  if (/\s~\s/.test(e)) {
    const parts = e.split(/\s*~\s*/).map((p) => jinjaToHandlebars(p));
    return parts.every((p) => p !== undefined) ? parts.map((p) => `{{ ${p} }}`).join('') : undefined;
  }
  return undefined;
}

const STATEMENT = /\{%-?\s*(.*?)\s*-?%\}/s;

/** A Handlebars block condition: a bare path, or a subexpression in parentheses. */
const blockArg = (x: string): string => (/\s/.test(x) ? `(${x})` : x);

/**
 * The whole template rewritten in Handlebars when every Jinja part of it has an equivalent:
 * `{% if %}`/`{% elif %}`/`{% else %}`/`{% endif %}`, `{% for x in list %}`/`{% endfor %}`,
 * `{# comments #}` and the `{{ }}` expressions adviseOne knows. Undefined otherwise.
 */
export function rewriteJinjaTemplate(source: string): string | undefined {
  let failed = false;
  const out = source
    .replace(/\{#.*?#\}/gs, '')
    .replace(/\{%-?\s*(.*?)\s*-?%\}|\{\{-?\s*(.*?)\s*-?\}\}/gs, (whole, stmt: string | undefined, expr: string | undefined) => {
      if (expr !== undefined) {
        const a = adviseOne(expr);
        if (a === undefined) return whole;
        return a.startsWith('{{') ? a : `{{ ${a} }}`;
      }
      const m = /^(if|elif|else|endif|for|endfor)\b\s*(.*)$/s.exec(stmt!);
      const cond = (e: string): string | undefined => jinjaToHandlebars(e);
      if (m?.[1] === 'if' || m?.[1] === 'elif') {
        const c = cond(m[2]!);
        if (c === undefined) failed = true;
        return m[1] === 'if' ? `{{#if ${blockArg(c ?? '')}}}` : `{{else if ${blockArg(c ?? '')}}}`;
      }
      if (m?.[1] === 'else' && m[2] === '') return '{{else}}';
      if (m?.[1] === 'endif' && m[2] === '') return '{{/if}}';
      if (m?.[1] === 'endfor' && m[2] === '') return '{{/each}}';
      const loop = m?.[1] === 'for' ? /^([A-Za-z_]\w*)\s+in\s+(.+)$/s.exec(m[2]!) : null;
      const list = loop ? cond(loop[2]!) : undefined;
      if (loop && list !== undefined) return `{{#each ${blockArg(list)} as |${loop[1]}|}}`;
      failed = true;
      return whole;
    });
  return failed ? undefined : out;
}

/**
 * Advice for the first Jinja-looking expression in `source`. `condition`: a when/until-style
 * expression, written without braces (or with them, mixed into other text).
 */
export function jinjaAdvice(source: string, condition = false): JinjaAdvice | undefined {
  const stmt = STATEMENT.exec(source);
  if (stmt) {
    const whole = rewriteJinjaTemplate(source);
    return { expr: stmt[0], instead: whole ?? '{{#if x}}...{{/if}} or {{#each list as |item|}}...{{/each}}' };
  }
  if (condition) {
    // `{{ x }} == "a"`: the braces are the mistake as much as the operator
    const bare = source.trim().replace(/\{\{-?\s*(.*?)\s*-?\}\}/gs, '$1');
    const instead = adviseOne(bare);
    if (instead) return { expr: source.trim(), instead: instead.replace(/^\{\{ (.*) \}\}$/, '$1') };
    return undefined;
  }
  for (const m of source.matchAll(/\{\{-?\s*(.*?)\s*-?\}\}/gs)) {
    const instead = adviseOne(m[1]!);
    if (instead) return { expr: m[0], instead: instead.startsWith('{{') ? instead : `{{ ${instead} }}` };
  }
  return undefined;
}
