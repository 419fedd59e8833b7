// The value typing of Ansible's INI inventories: a value that is a Python literal (as
// `ast.literal_eval` reads one) becomes that value, anything else stays the text it is.
// So `port=22` is a number, `debug=True` a boolean, `none=None` null, `items=[1, 'a']` a list,
// `d={'k': 'v'}` a mapping, `'x y'` a string without its quotes; `true`, `010` and
// `10.0.0.5` stay text. Tuples become lists (as in Ansible's JSON). Sets, bytes and complex
// numbers are not Ansible inventory values in practice; they stay text here.

/** `{ value }` when `text` is a Python literal, undefined when Ansible keeps it as text. */
export function pythonLiteral(text: string): { value: unknown } | undefined {
  const p = new LiteralParser(text.replace(/^[ \t]+/, ''));
  try {
    const value = p.expression();
    p.skipSpace();
    return p.atEnd() ? { value } : undefined;
  } catch (e) {
    if (e instanceof NotLiteral) return undefined;
    throw e;
  }
}

class NotLiteral extends Error {}

const DIGITS = { x: /[0-9a-fA-F]/, o: /[0-7]/, b: /[01]/ } as const;

class LiteralParser {
  private i = 0;
  constructor(private readonly s: string) {}

  atEnd(): boolean {
    return this.i >= this.s.length;
  }

  /** Spaces, tabs and a trailing `# comment` (Python's tokenizer drops both). */
  skipSpace(): void {
    while (this.i < this.s.length) {
      const c = this.s[this.i]!;
      if (c === ' ' || c === '\t' || c === '\f') this.i++;
      else if (c === '#') this.i = this.s.length;
      else break;
    }
  }

  private peek(): string {
    this.skipSpace();
    return this.s[this.i] ?? '';
  }

  private eat(c: string): boolean {
    if (this.peek() !== c) return false;
    this.i++;
    return true;
  }

  expression(): unknown {
    const c = this.peek();
    if (c === '+' || c === '-') {
      this.i++;
      const n = this.atom();
      if (typeof n !== 'number') throw new NotLiteral();
      return c === '-' ? -n : n;
    }
    return this.atom();
  }

  private atom(): unknown {
    const c = this.peek();
    if (c === '[') return this.sequence(']');
    if (c === '(') return this.parenthesised();
    if (c === '{') return this.mapping();
    if (/[0-9.]/.test(c)) return this.number();
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.i))?.[0];
    if (word !== undefined) {
      const next = this.s[this.i + word.length];
      if ((next === "'" || next === '"') && /^(r|u|R|U)$/.test(word)) {
        this.i += word.length;
        return this.strings(word.toLowerCase() === 'r');
      }
      this.i += word.length;
      if (word === 'True') return true;
      if (word === 'False') return false;
      if (word === 'None') return null;
      throw new NotLiteral();
    }
    if (c === "'" || c === '"') return this.strings(false);
    throw new NotLiteral();
  }

  /** One string or several adjacent ones ('a' "b" is 'ab'). */
  private strings(raw: boolean): string {
    let out = this.string(raw);
    for (;;) {
      const c = this.peek();
      if (c === "'" || c === '"') out += this.string(false);
      else if (/^[rRuU]['"]/.test(this.s.slice(this.i, this.i + 2))) {
        const r = this.s[this.i]!.toLowerCase() === 'r';
        this.i++;
        out += this.string(r);
      } else return out;
    }
  }

  private string(raw: boolean): string {
    const q = this.s[this.i]!;
    const triple = this.s.startsWith(q.repeat(3), this.i);
    const close = triple ? q.repeat(3) : q;
    this.i += close.length;
    let out = '';
    while (this.i < this.s.length) {
      if (this.s.startsWith(close, this.i)) {
        this.i += close.length;
        return out;
      }
      const c = this.s[this.i]!;
      if (c === '\\' && this.i + 1 < this.s.length) {
        const n = this.s[this.i + 1]!;
        if (raw) {
          out += c + n;
          this.i += 2;
          continue;
        }
        this.i += 2;
        out += this.escape(n);
        continue;
      }
      out += c;
      this.i++;
    }
    throw new NotLiteral(); // unterminated
  }

  private escape(n: string): string {
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', v: '\v', '0': '\0' };
    const hex = (len: number): string => {
      const h = this.s.slice(this.i, this.i + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(h)) throw new NotLiteral();
      this.i += len;
      return String.fromCodePoint(Number.parseInt(h, 16));
    };
    if (n === 'x') return hex(2);
    if (n === 'u') return hex(4);
    if (n === 'U') return hex(8);
    if (/[0-7]/.test(n)) {
      let o = n;
      while (o.length < 3 && /[0-7]/.test(this.s[this.i] ?? '')) o += this.s[this.i++];
      return String.fromCodePoint(Number.parseInt(o, 8));
    }
    const known = simple[n];
    return known ?? `\\${n}`; // Python keeps an unknown escape as written
  }

  private number(): number {
    const rest = this.s.slice(this.i);
    const radix = /^0([xXoObB])(_?[0-9a-zA-Z])+/.exec(rest);
    let text: string;
    let value: number;
    if (radix) {
      text = radix[0];
      const kind = radix[1]!.toLowerCase() as keyof typeof DIGITS;
      const digits = text.slice(2).replace(/_/g, '');
      if (![...digits].every((d) => DIGITS[kind].test(d))) throw new NotLiteral();
      value = Number.parseInt(digits, kind === 'x' ? 16 : kind === 'o' ? 8 : 2);
    } else {
      const dec = '[0-9](?:_?[0-9])*';
      const m = new RegExp(`^(?:(${dec})?\\.(${dec})?|(${dec}))(?:[eE][+-]?${dec})?`).exec(rest);
      if (!m || m[0] === '.' || /^\.[eE]/.test(m[0])) throw new NotLiteral();
      text = m[0];
      // Python 3 refuses leading zeros on a non-zero integer (010); 00 and 0_0 are 0.
      if (m[3] !== undefined && text === m[3] && /^0/.test(text) && /[1-9]/.test(text)) throw new NotLiteral();
      value = Number(text.replace(/_/g, ''));
    }
    this.i += text.length;
    if (/^[A-Za-z0-9_.]/.test(this.s.slice(this.i))) throw new NotLiteral(); // 1j, 1x, 1.2.3
    return value;
  }

  private sequence(end: string): unknown[] {
    this.i++; // the opening bracket
    const out: unknown[] = [];
    while (!this.eat(end)) {
      out.push(this.expression());
      if (this.eat(end)) break;
      if (!this.eat(',')) throw new NotLiteral();
    }
    return out;
  }

  /** `()` and `(1, 2)` are tuples (lists here), `(1)` is 1. */
  private parenthesised(): unknown {
    this.i++;
    if (this.eat(')')) return [];
    const first = this.expression();
    if (this.eat(')')) return first;
    if (!this.eat(',')) throw new NotLiteral();
    const out = [first];
    while (!this.eat(')')) {
      out.push(this.expression());
      if (this.eat(')')) break;
      if (!this.eat(',')) throw new NotLiteral();
    }
    return out;
  }

  private mapping(): Record<string, unknown> {
    this.i++;
    const out: Record<string, unknown> = {};
    while (!this.eat('}')) {
      const key = this.expression();
      // A set literal ({1, 2}) or a key JSON cannot hold: not an inventory value tsbm takes.
      if (!this.eat(':') || (key !== null && typeof key === 'object')) throw new NotLiteral();
      Object.defineProperty(out, String(key), { value: this.expression(), enumerable: true, writable: true, configurable: true });
      if (this.eat('}')) break;
      if (!this.eat(',')) throw new NotLiteral();
    }
    return out;
  }
}
