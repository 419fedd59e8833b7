// Finds registered literal strings in text in one pass, whatever their number. A regular
// expression alternation of every secret costs (text length x secrets) per call, and a
// thousand-node run registers a thousand BMC session tokens; this index looks candidates up by
// their first three characters, so a call costs about the text's length.

/** Shortest value the index holds (the Redactor ignores shorter ones). */
export const MIN_SECRET_LENGTH = 3;

function keyAt(s: string, i: number): number {
  // Three UTF-16 code units in one exact integer (< 2^48).
  return s.charCodeAt(i) * 0x1_0000_0000 + s.charCodeAt(i + 1) * 0x1_0000 + s.charCodeAt(i + 2);
}

export class SecretIndex {
  /** Candidates per three-character prefix, longest first so the longest match wins. */
  private readonly byPrefix = new Map<number, string[]>();
  size = 0;

  add(value: string): void {
    if (value.length < MIN_SECRET_LENGTH) return;
    const key = keyAt(value, 0);
    const list = this.byPrefix.get(key);
    if (!list) {
      this.byPrefix.set(key, [value]);
    } else {
      if (list.includes(value)) return;
      const at = list.findIndex((v) => v.length < value.length);
      if (at < 0) list.push(value);
      else list.splice(at, 0, value);
    }
    this.size++;
  }

  /** `text` with every occurrence of a held value replaced by `mask`, scanning left to right. */
  replaceAll(text: string, mask: string): string {
    let out = '';
    let copied = 0;
    const end = text.length - MIN_SECRET_LENGTH;
    for (let i = 0; i <= end; ) {
      const list = this.byPrefix.get(keyAt(text, i));
      const hit = list?.find((v) => text.startsWith(v, i));
      if (hit === undefined) {
        i++;
        continue;
      }
      out += text.slice(copied, i) + mask;
      i += hit.length;
      copied = i;
    }
    return copied === 0 ? text : out + text.slice(copied);
  }
}
