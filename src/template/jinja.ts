// Ansible users write Jinja out of habit: `{{ x | upper }}`, `when: x == "a"`, `x is defined`.
// Handlebars' own parse errors for those ("unexpected close block params") do not say what to
// write instead. This recognises the common forms in a template that did not compile and
// suggests the tsbm helper for each. Only consulted after a failure, so valid templates are
// never second-guessed.

export interface JinjaAdvice {
  /** The offending expression, as written. */
  expr: string;
  /** What to write instead (a bare expression for conditions, `{{ ... }}` otherwise). */
  instead: string;
}

const FILTERS: Record<string, (x: string, args: string) => string> = {
  default: (x, a) => `default ${x} ${a || "''"}`,
  d: (x, a) => `default ${x} ${a || "''"}`,
  upper: (x) => `upper ${x}`,
  lower: (x) => `lower ${x}`,
  trim: (x) => `trim ${x}`,
  length: (x) => `len ${x}`,
  count: (x) => `len ${x}`,
  join: (x, a) => `join ${x}${a ? ` ${a}` : ''}`,
  split: (x, a) => `split ${x}${a ? ` ${a}` : ''}`,
  replace: (x, a) => `replace ${x} ${a.replace(/\s*,\s*/g, ' ')}`,
  to_json: (x) => `json ${x}`,
  to_nice_json: (x) => `json ${x} 2`,
  from_json: (x) => `from_json ${x}`,
  to_yaml: (x) => `yaml ${x}`,
  to_nice_yaml: (x) => `yaml ${x}`,
  b64encode: (x) => `b64encode ${x}`,
  b64decode: (x) => `b64decode ${x}`,
  quote: (x) => `quote ${x}`,
  bool: (x) => x,
  int: (x) => x,
  float: (x) => x,
  string: (x) => x,
};

const OPS: Record<string, string> = { '==': 'eq', '!=': 'ne', '<=': 'le', '>=': 'ge', '<': 'lt', '>': 'gt' };

/** `a['b']`, `a["b"]` -> `a.b` (Handlebars has no subscripts). */
function operand(s: string): string {
  return s.trim().replace(/\[\s*(['"])([A-Za-z_][\w-]*)\1\s*\]/g, '.$2');
}

function adviseOne(inner: string): string | undefined {
  const e = inner.trim();
  if (e === '' || e.startsWith('#') || e.startsWith('/') || e.startsWith('!')) return undefined;
  let m = /^(.+?)\s+if\s+(.+?)\s+else\s+(.+)$/.exec(e);
  if (m) return `{{#if ${operand(m[2]!)}}}{{ ${operand(m[1]!)} }}{{else}}{{ ${operand(m[3]!)} }}{{/if}}`;
  const chain = e.split(/\s*\|\s*/);
  if (chain.length > 1 && chain.slice(1).every((f) => /^[A-Za-z_]\w*\s*(\(.*\))?$/.test(f))) {
    let x = operand(chain[0]!);
    for (const f of chain.slice(1)) {
      const [, name, args] = /^([A-Za-z_]\w*)\s*(?:\((.*)\))?$/.exec(f)!;
      const wrapped = /\s/.test(x) ? `(${x})` : x;
      const known = FILTERS[name!];
      x = known ? known(wrapped, (args ?? '').trim()) : `${name} ${wrapped}`;
    }
    return x;
  }
  m = /^(\S+)\s+is\s+(not\s+)?(defined|undefined|none)$/i.exec(e);
  if (m) {
    const x = operand(m[1]!);
    const negate = Boolean(m[2]) !== (m[3]!.toLowerCase() !== 'defined');
    return negate ? `not (defined ${x})` : `defined ${x}`;
  }
  m = /^(\S+)\s+(and|or)\s+(\S+)$/.exec(e);
  if (m) return `${m[2]} ${operand(m[1]!)} ${operand(m[3]!)}`;
  m = /^(\S+)\s+(not\s+)?in\s+(\S+)$/.exec(e);
  if (m) return `${m[2] ? 'not (contains' : 'contains'} ${operand(m[3]!)} ${operand(m[1]!)}${m[2] ? ')' : ''}`;
  m = /^(.+?)\s*(==|!=|<=|>=|<|>)\s*(.+)$/.exec(e);
  if (m) return `${OPS[m[2]!]} ${operand(m[1]!)} ${operand(m[3]!)}`;
  m = /^([A-Za-z_][\w.]*)\.(upper|lower|strip)\(\)$/.exec(e);
  if (m) return `${m[2] === 'strip' ? 'trim' : m[2]} ${m[1]}`;
  if (/\[\s*['"]/.test(e)) return operand(e);
  if (/\s~\s/.test(e)) return e.split(/\s*~\s*/).map((p) => `{{ ${operand(p)} }}`).join('');
  return undefined;
}

/**
 * Advice for the first Jinja-looking expression in `source`. `condition`: a when/until-style
 * expression, written without braces (or with them, mixed into other text).
 */
export function jinjaAdvice(source: string, condition = false): JinjaAdvice | undefined {
  const stmt = /\{%-?\s*(.*?)\s*-?%\}/s.exec(source);
  if (stmt) return { expr: stmt[0], instead: '{{#if x}}...{{/if}} or {{#each list}}...{{/each}}' };
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
