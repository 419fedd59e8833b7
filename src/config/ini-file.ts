// Reads a config file the way ansible.cfg is read (Python's configparser, as Ansible sets it
// up): `[section]` headers, `key = value` or `key: value`, keys in any case, whole-line `#` and
// `;` comments, inline `;` comments after whitespace, indented lines continuing a value. A key
// given twice in a section is an error, as configparser's strict mode makes it.
import { type SourcePos, TsbmError } from '../errors.js';

interface IniEntry {
  value: string;
  pos: SourcePos;
}

/** section -> key (lower case) -> entry. */
export type IniSections = Map<string, Map<string, IniEntry>>;

const fail = (pos: SourcePos, message: string, hint: string) => new TsbmError('options', message, { pos, hint });

export function parseIniConfig(text: string, file: string): IniSections {
  const out: IniSections = new Map();
  let section: Map<string, IniEntry> | undefined;
  let last: IniEntry | undefined;
  const lines = text.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const pos = { file, line: i + 1, col: 1 };
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#') || trimmed.startsWith(';')) {
      if (trimmed === '') last = undefined;
      continue;
    }
    if (/^\s/.test(raw) && last) {
      last.value = `${last.value}\n${stripComment(trimmed)}`;
      continue;
    }
    const header = /^\[([^\]]+)\]$/.exec(trimmed);
    if (header) {
      const name = header[1]!.trim();
      section = out.get(name) ?? new Map();
      out.set(name, section);
      last = undefined;
      continue;
    }
    const kv = /^([^=:]+?)\s*[=:]\s*(.*)$/.exec(trimmed);
    if (!kv) throw fail(pos, `cannot read line ${i + 1} of ${file}: expected "key = value" or a [section]`, 'see docs/config.md');
    if (!section) throw fail(pos, `${file}: "${kv[1]}" comes before any [section]`, 'put settings under [defaults]');
    const key = kv[1]!.toLowerCase();
    if (section.has(key)) {
      const first = section.get(key)!.pos.line;
      throw fail(pos, `${file}: "${key}" is set twice in one section (first on line ${first})`, 'keep one of them');
    }
    last = { value: stripComment(kv[2]!), pos: { file, line: i + 1, col: raw.indexOf(kv[2]!) + 1 || 1 } };
    section.set(key, last);
  }
  return out;
}

/** `value ; comment` -> `value` (a `;` right after text stays: it is part of the value). */
function stripComment(v: string): string {
  const m = /\s;/.exec(v);
  return (m ? v.slice(0, m.index) : v).trim();
}
