// Reads `partx -P` output: one partition a line as KEY="VALUE" pairs. partx costs about a third
// of sfdisk's CPU per run (it does not load libfdisk, readline, tinfo), so the reads after a
// write that only need numbers and offsets use it; the plans that need firstlba, lastlba and
// the sector size stay on `sfdisk --json` (partx prints none of them).

/**
 * The unit of partx's START and SECTORS: libblkid counts in 512-byte sectors whatever the
 * disk's logical sector size (a 4Kn disk's partition at sector 256 is START="2048").
 */
export const PARTX_UNIT_BYTES = 512;

/** A partition's place on the disk in bytes, so no sector unit leaks out of the parser. */
export interface PartitionExtent {
  number: number;
  offsetBytes: number;
  sizeBytes: number;
  /** GPT partition name (PARTLABEL); MBR has none. */
  name?: string;
}

export interface PartxTable {
  /** The partition table type partx names (SCHEME of the first partition): gpt, dos, ... */
  scheme: string;
  partitions: PartitionExtent[];
}

/** `partx -P` with the columns parsePartxPairs reads (pairs mode is its own mode: no --show). */
export function partxArgv(device: string): string[] {
  return ['partx', '-P', '-o', 'NR,START,SECTORS,NAME,SCHEME', device];
}

/**
 * The partitions `partx -P -o NR,START,SECTORS,NAME,SCHEME` printed, or undefined when the
 * output holds none or any line is not what partx prints (the caller then asks sfdisk). A table
 * without partitions prints nothing, so it is undefined too.
 */
export function parsePartxPairs(text: string): PartxTable | undefined {
  const partitions: PartitionExtent[] = [];
  let scheme: string | undefined;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const kv = parsePairs(line);
    if (!kv) return undefined;
    const number = count(kv.get('NR'));
    const start = count(kv.get('START'));
    const sectors = count(kv.get('SECTORS'));
    const s = kv.get('SCHEME');
    if (number === undefined || number < 1 || start === undefined || sectors === undefined || !s)
      return undefined;
    scheme ??= s;
    const name = kv.get('NAME');
    partitions.push({
      number,
      offsetBytes: start * PARTX_UNIT_BYTES,
      sizeBytes: sectors * PARTX_UNIT_BYTES,
      ...(name ? { name } : {}),
    });
  }
  return scheme === undefined ? undefined : { scheme, partitions };
}

function count(v: string | undefined): number | undefined {
  if (v === undefined || !/^\d+$/.test(v)) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : undefined;
}

// A pair: KEY="VALUE", the value with no bare quote (partx writes " and \ as \x22 and \x5c).
const PAIR = /[ \t]*([A-Za-z0-9_:.-]+)="((?:[^"\\]|\\.)*)"/y;

/** The pairs of one line, or undefined when anything but pairs and blanks is on it. */
function parsePairs(line: string): Map<string, string> | undefined {
  const out = new Map<string, string>();
  PAIR.lastIndex = 0;
  let at = 0;
  for (;;) {
    const m = PAIR.exec(line);
    if (!m) break;
    out.set(m[1] as string, unescapeValue(m[2] as string));
    at = PAIR.lastIndex;
  }
  return out.size > 0 && line.slice(at).trim() === '' ? out : undefined;
}

/**
 * libsmartcols escapes every byte that is not printable ASCII, and " \ ` $, as \xHH: a UTF-8
 * name comes as one escape per byte, so the bytes are collected and decoded together.
 */
function unescapeValue(v: string): string {
  if (!v.includes('\\')) return v;
  const bytes: number[] = [];
  const text = (s: string) => {
    for (const b of Buffer.from(s, 'utf8')) bytes.push(b);
  };
  for (let i = 0; i < v.length; ) {
    if (v[i] === '\\') {
      const hex = /^x([0-9a-fA-F]{2})/.exec(v.slice(i + 1, i + 4));
      if (hex) {
        bytes.push(Number.parseInt(hex[1] as string, 16));
        i += 4;
        continue;
      }
      // Any other escaped character stands for itself (\" and \\ from other writers).
      if (i + 1 < v.length) {
        const next = String.fromCodePoint(v.codePointAt(i + 1) as number);
        text(next);
        i += 1 + next.length;
        continue;
      }
    }
    const ch = String.fromCodePoint(v.codePointAt(i) as number);
    text(ch);
    i += ch.length;
  }
  return Buffer.from(bytes).toString('utf8');
}
