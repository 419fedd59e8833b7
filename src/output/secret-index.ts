// Finds registered literal strings in text in one pass, whatever their number. A regular
// expression alternation of every secret costs (text length x secrets) per call, and a
// thousand-node run registers a thousand BMC session tokens; this index looks candidates up by
// their first three characters, so a call costs about the text's length. A bit table of those
// prefixes' hashes turns away almost every position before the Map is consulted: events carry
// kilobytes of command output, and a Map lookup with a 48-bit key per character was ~3% of a
// thousand-node run's CPU.

/** Shortest value the index holds (the Redactor ignores shorter ones). */
export const MIN_SECRET_LENGTH = 3;

function keyAt(s: string, i: number): number {
  // Three UTF-16 code units in one exact integer (< 2^48).
  return s.charCodeAt(i) * 0x1_0000_0000 + s.charCodeAt(i + 1) * 0x1_0000 + s.charCodeAt(i + 2);
}

/** Bits in the prefix filter (2^20 bits = 128 KiB). */
const FILTER_BITS = 20;
const FILTER_MASK = (1 << FILTER_BITS) - 1;

function hashAt(s: string, i: number): number {
  return (
    (Math.imul(s.charCodeAt(i), 0x9e3779b1) ^
      Math.imul(s.charCodeAt(i + 1), 0x85ebca77) ^
      s.charCodeAt(i + 2)) &
    FILTER_MASK
  );
}

export class SecretIndex {
  /** Candidates per three-character prefix, longest first so the longest match wins. */
  private readonly byPrefix = new Map<number, string[]>();
  /** One bit per hash of a held prefix: a clear bit means no value starts here. */
  private readonly filter = new Uint8Array(1 << (FILTER_BITS - 3));
  size = 0;

  add(value: string): void {
    if (value.length < MIN_SECRET_LENGTH) return;
    const h = hashAt(value, 0);
    this.filter[h >>> 3] = (this.filter[h >>> 3] as number) | (1 << (h & 7));
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
    const filter = this.filter;
    for (let i = 0; i <= end; ) {
      const h = hashAt(text, i);
      if (((filter[h >>> 3] as number) & (1 << (h & 7))) === 0) {
        i++;
        continue;
      }
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
