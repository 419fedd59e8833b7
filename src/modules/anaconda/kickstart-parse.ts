// A kickstart file as structure: commands (one per line, split as a POSIX shell splits words,
// `#` starting a comment), `%include` lines, and the sections `%pre`, `%post`, `%onerror`,
// `%traceback`, `%packages`, `%addon`... up to their `%end`, whose bodies are kept as text. The
// controller checks a rendered kickstart with it before anything is powered; the simulated
// installer runs one with it.
export interface KsCommand {
  name: string;
  args: string[];
  line: number;
}

export interface KsSection {
  /** pre | pre-install | post | onerror | traceback | packages | addon | anaconda */
  kind: string;
  args: string[];
  /** Line of the %kind header. */
  line: number;
  body: string;
}

export interface Kickstart {
  commands: KsCommand[];
  sections: KsSection[];
  /** `%include FILE` lines in the command part, in order (resolved after %pre runs). */
  includes: { path: string; line: number }[];
}

export class KickstartSyntaxError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`kickstart line ${line}: ${message}`);
  }
}

const SECTIONS = new Set(['pre', 'pre-install', 'post', 'onerror', 'traceback', 'packages', 'addon', 'anaconda']);

/** Splits one line into words as a POSIX shell would (quotes, backslashes, `#` comments). */
export function splitWords(text: string, line: number): string[] {
  const out: string[] = [];
  let cur = '';
  let inWord = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === ' ' || c === '\t' || c === '\r') {
      if (inWord) out.push(cur);
      cur = '';
      inWord = false;
      i++;
    } else if (c === '#' && !inWord) {
      break;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new KickstartSyntaxError(line, 'unclosed single quote');
      cur += text.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      i++;
      let closed = false;
      while (i < text.length) {
        const d = text[i]!;
        if (d === '"') {
          closed = true;
          i++;
          break;
        }
        if (d === '\\' && i + 1 < text.length && '"\\$`'.includes(text[i + 1]!)) {
          cur += text[i + 1];
          i += 2;
        } else {
          cur += d;
          i++;
        }
      }
      if (!closed) throw new KickstartSyntaxError(line, 'unclosed double quote');
      inWord = true;
    } else if (c === '\\' && i + 1 < text.length) {
      cur += text[i + 1];
      inWord = true;
      i += 2;
    } else {
      cur += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) out.push(cur);
  return out;
}

export function parseKickstart(text: string): Kickstart {
  const ks: Kickstart = { commands: [], sections: [], includes: [] };
  const lines = text.split('\n');
  let section: KsSection | undefined;
  let body: string[] = [];
  lines.forEach((raw, idx) => {
    const n = idx + 1;
    const trimmed = raw.trim();
    if (section) {
      if (trimmed === '%end') {
        section.body = body.length ? `${body.join('\n')}\n` : '';
        ks.sections.push(section);
        section = undefined;
        body = [];
      } else if (/^%(pre|pre-install|post|onerror|traceback|packages|addon|anaconda)\b/.test(trimmed)) {
        throw new KickstartSyntaxError(n, `${trimmed.split(/\s/)[0]} inside %${section.kind} (line ${section.line}): a %end is missing`);
      } else {
        body.push(raw);
      }
      return;
    }
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const words = splitWords(trimmed, n);
    if (words.length === 0) return;
    const head = words[0]!;
    if (head.startsWith('%')) {
      const kind = head.slice(1);
      if (kind === 'end') throw new KickstartSyntaxError(n, '%end without a section');
      if (kind === 'include' || kind === 'ksappend') {
        if (words.length !== 2) throw new KickstartSyntaxError(n, `%${kind} takes one file`);
        ks.includes.push({ path: words[1]!, line: n });
        return;
      }
      if (!SECTIONS.has(kind)) throw new KickstartSyntaxError(n, `unknown section ${head}`);
      section = { kind, args: words.slice(1), line: n, body: '' };
      return;
    }
    ks.commands.push({ name: head, args: words.slice(1), line: n });
  });
  if (section) {
    const open = section as KsSection;
    throw new KickstartSyntaxError(open.line, `%${open.kind} has no %end`);
  }
  return ks;
}

/**
 * A command's options: `--name=value`, `--name value` (for names in `withValue`) and `--flag`;
 * anything else is positional. Unknown option names are the caller's to judge.
 */
export function commandOptions(args: readonly string[], withValue: ReadonlySet<string> = new Set()): { options: Map<string, string | true>; positional: string[] } {
  const options = new Map<string, string | true>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    if (eq > 0) options.set(a.slice(2, eq), a.slice(eq + 1));
    else if (withValue.has(a.slice(2)) && i + 1 < args.length) options.set(a.slice(2), args[++i]!);
    else options.set(a.slice(2), true);
  }
  return { options, positional };
}
