// sfdisk's input script, as far as tsbm and the simulated lab write one: header lines
// (`label: gpt`, `label-id:`, `first-lba:`, ...) and one partition a line in named fields
// (`start=2048, size=512MiB, type=U, name="EFI-SYSTEM"`), optionally after `DEVICE :`, or a
// line of empty unnamed fields (`,`) for all defaults. Anything else is refused by line number.

export class ScriptError extends Error {}

/** A START or SIZE value: sectors, or bytes given with a unit (which sfdisk then aligns). */
interface Amount {
  sectors: number;
  /** Given with a unit suffix (KiB, M, ...): sfdisk aligns such a partition's end. */
  unit: boolean;
}

export interface PartitionSpec {
  line: number;
  start?: Amount;
  /** Undefined: the default (to the end of the free space). */
  size?: Amount;
  type?: string;
  name?: string;
  uuid?: string;
  attrs?: string;
}

export interface SfdiskScript {
  header: Map<string, string>;
  partitions: PartitionSpec[];
}

const HEADERS = new Set(['label', 'label-id', 'device', 'unit', 'first-lba', 'last-lba', 'table-length', 'grain', 'sector-size']);
const FIELDS = new Set(['start', 'size', 'type', 'name', 'uuid', 'attrs', 'bootable', 'Id']);

const UNITS: Record<string, number> = {
  '': 1,
  K: 1024,
  KIB: 1024,
  KB: 1000,
  M: 1024 ** 2,
  MIB: 1024 ** 2,
  MB: 1000 ** 2,
  G: 1024 ** 3,
  GIB: 1024 ** 3,
  GB: 1000 ** 3,
  T: 1024 ** 4,
  TIB: 1024 ** 4,
  TB: 1000 ** 4,
};

/** `2048`, `512MiB`, `1.5M`, `+10M` (a leading + is allowed for sizes); sectors of 512 bytes. */
function parseAmount(text: string, what: string, line: number): Amount {
  const m = /^\+?(\d+(?:\.\d+)?)\s*([A-Za-z]*)$/.exec(text.trim());
  const unit = m ? UNITS[m[2]!.toUpperCase()] : undefined;
  if (!m || unit === undefined) throw new ScriptError(`line ${line}: unsupported ${what} value "${text}"`);
  if (m[2] === '') {
    if (m[1]!.includes('.')) throw new ScriptError(`line ${line}: unsupported ${what} value "${text}"`);
    return { sectors: Number(m[1]), unit: false };
  }
  return { sectors: Math.floor((Number(m[1]) * unit) / 512), unit: true };
}

/** Splits `a=1, b="x, y" c=2` into fields at commas and blanks outside double quotes. */
function splitFields(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  let any = false;
  for (const ch of text) {
    if (ch === '"') {
      quoted = !quoted;
      cur += ch;
    } else if (!quoted && (ch === ',' || ch === ' ' || ch === '\t')) {
      if (cur !== '') out.push(cur);
      else if (ch === ',') out.push(''); // an empty unnamed field
      cur = '';
      any = true;
    } else cur += ch;
  }
  if (cur !== '' || !any) out.push(cur);
  return out;
}

const unquote = (v: string): string => (v.length >= 2 && v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1) : v);

function parsePartitionLine(text: string, line: number): PartitionSpec {
  const spec: PartitionSpec = { line };
  const fields = splitFields(text);
  // A line of nothing but empty unnamed fields (`,` or `,,`) asks for every default.
  if (fields.every((f) => f === '')) return spec;
  for (const f of fields) {
    if (f === '') continue;
    const eq = f.indexOf('=');
    const key = eq < 0 ? f : f.slice(0, eq).trim();
    if (!FIELDS.has(key)) throw new ScriptError(`line ${line}: unsupported command`);
    if (eq < 0) {
      if (key === 'bootable') continue; // GPT has no boot flag; sfdisk accepts and ignores it
      throw new ScriptError(`line ${line}: unsupported command`);
    }
    const value = unquote(f.slice(eq + 1).trim());
    switch (key) {
      case 'start':
        spec.start = parseAmount(value, 'start', line);
        break;
      case 'size':
        if (value !== '+' && value !== '') spec.size = parseAmount(value, 'size', line);
        break;
      case 'type':
      case 'Id':
        spec.type = value;
        break;
      case 'name':
        spec.name = value;
        break;
      case 'uuid':
        spec.uuid = value;
        break;
      case 'attrs':
        spec.attrs = value;
        break;
    }
  }
  return spec;
}

export function parseScript(text: string): SfdiskScript {
  const header = new Map<string, string>();
  const partitions: PartitionSpec[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = i + 1;
    const t = raw.replace(/#.*$/, '').trim();
    if (t === '') return;
    const h = /^([a-z-]+)\s*:\s*(.*)$/.exec(t);
    if (h && HEADERS.has(h[1]!)) {
      if (partitions.length > 0) throw new ScriptError(`line ${line}: header lines must come before partitions`);
      header.set(h[1]!, h[2]!.trim());
      return;
    }
    // `/dev/vda1 : start=...`: the device name before the colon is only a label.
    const dev = /^(\/\S+)\s*:\s*(.*)$/.exec(t);
    partitions.push(parsePartitionLine(dev ? dev[2]! : t, line));
  });
  return { header, partitions };
}
