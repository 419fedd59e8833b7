// Translates one Jinja expression (what Ansible users write in `when:` and `{{ }}`) into the
// Handlebars expression that means the same, with Jinja's precedence: `or` < `and` < `not` <
// comparisons and tests (`==`, `in`, `is defined`) < filters (`|`). Used only to suggest a
// rewrite after a template failed; undefined when the expression holds something without a
// tsbm equivalent, so no suggestion is better than a wrong one.

type Tok = { kind: 'name' | 'str' | 'num' | 'op'; text: string };

const OPS: Record<string, string> = { '==': 'eq', '!=': 'ne', '<=': 'le', '>=': 'ge', '<': 'lt', '>': 'gt' };

/** Jinja filters with a tsbm helper that means the same: (value, args) -> Handlebars call. */
export const JINJA_FILTERS: Readonly<Record<string, (x: string, a: string[]) => string | undefined>> = {
  default: (x, a) => `default ${x} ${a[0] ?? "''"}`,
  d: (x, a) => `default ${x} ${a[0] ?? "''"}`,
  upper: (x) => `upper ${x}`,
  lower: (x) => `lower ${x}`,
  trim: (x) => `trim ${x}`,
  length: (x) => `len ${x}`,
  count: (x) => `len ${x}`,
  join: (x, a) => `join ${x}${a.length ? ` ${a[0]}` : ''}`,
  split: (x, a) => `split ${x}${a.length ? ` ${a[0]}` : ''}`,
  replace: (x, a) => (a.length === 2 ? `replace ${x} ${a[0]} ${a[1]}` : undefined),
  to_json: (x) => `json ${x}`,
  to_nice_json: (x) => `json ${x} 2`,
  from_json: (x) => `from_json ${x}`,
  to_yaml: (x) => `yaml ${x}`,
  to_nice_yaml: (x) => `yaml ${x}`,
  b64encode: (x) => `b64encode ${x}`,
  b64decode: (x) => `b64decode ${x}`,
};

class NoRewrite extends Error {}

function tokens(s: string): Tok[] {
  const out: Tok[] = [];
  const re = /\s*(?:([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*|\[\s*(?:'[^']*'|"[^"]*"|\d+)\s*\])*)|('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(-?\d+(?:\.\d+)?)|(==|!=|<=|>=|<|>|\||\(|\)|,))/y;
  let i = 0;
  while (i < s.length) {
    if (/^\s*$/.test(s.slice(i))) break;
    re.lastIndex = i;
    const m = re.exec(s);
    if (!m) throw new NoRewrite();
    i = re.lastIndex;
    if (m[1]) out.push({ kind: 'name', text: m[1] });
    else if (m[2]) out.push({ kind: 'str', text: m[2] });
    else if (m[3]) out.push({ kind: 'num', text: m[3] });
    else out.push({ kind: 'op', text: m[4]! });
  }
  return out;
}

/** `a['b']`, `a[0]` -> `a.b`, `a.[0]` (Handlebars paths). */
const pathOf = (name: string): string =>
  name.replace(/\[\s*(['"])([A-Za-z_][\w-]*)\1\s*\]/g, '.$2').replace(/\[\s*(\d+)\s*\]/g, '.[$1]');

const group = (x: string): string => (/\s/.test(x) && !/^\(.*\)$/.test(x) ? `(${x})` : x);

// A variable the left side of `and` tests with `is defined` (or of `or` with `is not defined`):
// Jinja never evaluates the right side without it, but Handlebars evaluates every argument, so
// the right side reads it through `default` (the value given never decides the result).
const GUARD = '\u0000';
const guardedRead = (x: string, fallback: string): string => (x.startsWith(GUARD) ? `(default ${x.slice(1)} ${fallback})` : x);

class Parser {
  private i = 0;
  private readonly guards = new Set<string>();
  constructor(private readonly t: Tok[]) {}
  private guarded<T>(left: string, test: RegExp, parse: () => T): T {
    const name = test.exec(left)?.[1];
    const added = name !== undefined && !this.guards.has(name);
    if (added) this.guards.add(name);
    try {
      return parse();
    } finally {
      if (added) this.guards.delete(name);
    }
  }
  private peek(): Tok | undefined {
    return this.t[this.i];
  }
  private isWord(w: string, at = 0): boolean {
    const k = this.t[this.i + at];
    return k?.kind === 'name' && k.text === w;
  }
  private isOp(o: string): boolean {
    const k = this.peek();
    return k?.kind === 'op' && k.text === o;
  }
  private expect(o: string): void {
    if (!this.isOp(o)) throw new NoRewrite();
    this.i++;
  }
  done(): boolean {
    return this.i >= this.t.length;
  }
  or(): string {
    let x = this.and();
    while (this.isWord('or')) {
      this.i++;
      const left = x;
      x = `or ${group(x)} ${group(this.guarded(left, /^not \(defined ([\w.]+)\)$/, () => this.and()))}`;
    }
    return x;
  }
  private and(): string {
    let x = this.not();
    while (this.isWord('and')) {
      this.i++;
      const left = x;
      x = `and ${group(x)} ${group(this.guarded(left, /^defined ([\w.]+)$/, () => this.not()))}`;
    }
    return x;
  }
  private not(): string {
    if (this.isWord('not')) {
      this.i++;
      return `not ${group(this.not())}`;
    }
    return this.compare();
  }
  private compare(): string {
    const x = this.filtered();
    const k = this.peek();
    if (k?.kind === 'op' && OPS[k.text]) {
      this.i++;
      const y = this.filtered();
      // a guarded side defaults to the other side: equal, never an error, never the answer
      const [a, b] = [guardedRead(x, group(y.startsWith(GUARD) ? "''" : y)), guardedRead(y, group(x.startsWith(GUARD) ? "''" : x))];
      return `${OPS[k.text]} ${group(a)} ${group(b)}`;
    }
    if (this.isWord('in') || (this.isWord('not') && this.isWord('in', 1))) {
      const negate = this.isWord('not');
      this.i += negate ? 2 : 1;
      const c = `contains ${group(this.filtered())} ${group(x)}`;
      return negate ? `not (${c})` : c;
    }
    if (this.isWord('is')) {
      this.i++;
      let negate = false;
      if (this.isWord('not')) {
        negate = true;
        this.i++;
      }
      const test = this.peek();
      if (test?.kind !== 'name') throw new NoRewrite();
      this.i++;
      let r: string;
      const v = x.replace(GUARD, '');
      if (test.text === 'defined') r = `defined ${v}`;
      else if (test.text === 'undefined') r = `not (defined ${v})`;
      else throw new NoRewrite(); // other tests (none, string, match...) have no tsbm helper
      if (negate) r = r.startsWith('not (') ? r.slice(5, -1) : `not (${r})`;
      return r;
    }
    return x;
  }
  private filtered(): string {
    let x = this.atom();
    while (this.isOp('|')) {
      this.i++;
      const f = this.peek();
      if (f?.kind !== 'name') throw new NoRewrite();
      this.i++;
      const args: string[] = [];
      if (this.isOp('(')) {
        this.i++;
        while (!this.isOp(')')) {
          args.push(group(this.or()));
          if (this.isOp(',')) this.i++;
          else if (!this.isOp(')')) throw new NoRewrite();
        }
        this.i++;
      }
      const make = JINJA_FILTERS[f.text];
      const r = make?.(group(x), args);
      if (r === undefined) throw new NoRewrite();
      x = r;
    }
    return x;
  }
  private atom(): string {
    const k = this.peek();
    if (!k) throw new NoRewrite();
    if (this.isOp('(')) {
      this.i++;
      const x = this.or();
      this.expect(')');
      return group(x);
    }
    this.i++;
    if (k.kind === 'str') return k.text;
    if (k.kind === 'num') return k.text;
    if (k.kind === 'name') {
      if (/^(true|True)$/.test(k.text)) return 'true';
      if (/^(false|False)$/.test(k.text)) return 'false';
      if (/^(none|None)$/.test(k.text)) return 'null';
      if (['and', 'or', 'not', 'in', 'is', 'if', 'else'].includes(k.text)) throw new NoRewrite();
      const path = pathOf(k.text);
      return this.guards.has(path.split('.')[0]!) ? `${GUARD}${path}` : path;
    }
    throw new NoRewrite();
  }
}

/** The Handlebars expression for a Jinja one, or undefined when there is none worth suggesting. */
export function jinjaToHandlebars(expr: string): string | undefined {
  try {
    const p = new Parser(tokens(expr));
    const out = p.or().replace(new RegExp(`${GUARD}([^\\s()]+)`, 'g'), "(default $1 '')");
    if (!p.done()) return undefined;
    return out.replace(/^\((.*)\)$/, '$1');
  } catch (e) {
    if (e instanceof NoRewrite) return undefined;
    throw e;
  }
}
