// Ironic's root device hints: names, types, operators and matching, as pure functions.
// Same hint names and operator spellings as Ironic (oslo specs matcher), so a node's
// `properties.root_device` carries over unchanged. Differences, on purpose: string
// comparisons ignore case (lsblk and BMCs disagree on vendor/model case), and an unknown hint
// name or an unparseable value is an error instead of being silently dropped.
import { type Disk, GIB, describeDisk, sizeGiB } from './disk.js';
import { isCandidate } from './lsblk.js';
import { HINT_NAMES, HINT_TYPES, type HintName } from './arg-names.js';

const NUMERIC_OPS = ['=', '==', '!=', '>=', '<=', '>', '<', '<in>', '<or>'] as const;
const STRING_OPS = ['s==', 's!=', 's>=', 's<=', 's>', 's<', '<in>', '<all-in>', '<or>'] as const;
type Op = (typeof NUMERIC_OPS)[number] | (typeof STRING_OPS)[number];

/** One parsed hint: `size: ">= 100"` becomes {name: size, op: '>=', values: ['100']}. */
export interface Hint {
  name: HintName;
  op: Op | 'bool';
  values: string[];
  /** The hint as the operator wrote it, for messages. */
  source: string;
}

export class HintError extends Error {}

const ALL_OPS = [...new Set<string>([...NUMERIC_OPS, ...STRING_OPS])].sort((a, b) => b.length - a.length);

function parseBool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v === 1 ? true : v === 0 ? false : undefined;
  const s = String(v).trim().toLowerCase();
  if (['1', 't', 'true', 'on', 'y', 'yes'].includes(s)) return true;
  if (['0', 'f', 'false', 'off', 'n', 'no'].includes(s)) return false;
  return undefined;
}

/** Splits `<or> a <or> b` / `<in> x` / `>= 10` / `plain` into operator and values. */
function splitExpression(expr: string, type: 'int' | 'str'): { op: Op; values: string[] } {
  const s = expr.trim();
  if (s.startsWith('<or>')) {
    const values = s
      .split('<or>')
      .map((x) => x.trim())
      .filter((x) => x !== '');
    if (values.length === 0) throw new HintError(`"${expr}": <or> needs at least one value`);
    return { op: '<or>', values };
  }
  for (const op of ALL_OPS) {
    if (
      s.startsWith(op) &&
      (s.length === op.length || /\s/.test(s.charAt(op.length)) || !(op.startsWith('<') && op.endsWith('>')))
    ) {
      const rest = s.slice(op.length).trim();
      if (rest === '') throw new HintError(`"${expr}": operator ${op} needs a value`);
      const values = op === '<all-in>' ? rest.split(/\s+/) : [rest];
      return { op: op as Op, values };
    }
  }
  return { op: type === 'int' ? '==' : 's==', values: [s] };
}

function normaliseValue(name: HintName, v: string): string {
  // Ironic accepts `name: sda` and `by_path: pci-0000:...` without their directory.
  if (name === 'name' && !v.startsWith('/dev/')) return `/dev/${v}`;
  if (name === 'by_path' && !v.startsWith('/dev/disk/by-path/')) return `/dev/disk/by-path/${v}`;
  return v;
}

/** Validates and parses a hints mapping. Throws HintError naming the bad hint and what is valid. */
export function parseHints(raw: unknown): Hint[] {
  if (raw === undefined || raw === null || raw === '') return [];
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new HintError(`root device hints must be a mapping like {size: ">= 100", model: "<in> Samsung"}`);
  }
  const hints: Hint[] = [];
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    if (!(key in HINT_TYPES)) {
      throw new HintError(`unknown root device hint "${key}"; valid hints: ${HINT_NAMES.join(', ')}`);
    }
    const name = key as HintName;
    const type = HINT_TYPES[name];
    const source = `${name}: ${JSON.stringify(value)}`;
    if (type === 'bool') {
      const b = parseBool(value);
      if (b === undefined) throw new HintError(`hint ${source}: expected true or false`);
      hints.push({ name, op: 'bool', values: [String(b)], source });
      continue;
    }
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new HintError(`hint ${source}: expected a string or number`);
    }
    const { op, values } = splitExpression(String(value), type);
    if (type === 'int') {
      if (op.startsWith('s') || op === '<all-in>') {
        throw new HintError(
          `hint ${source}: ${op} is a string operator; size takes ${NUMERIC_OPS.join(' ')}`,
        );
      }
      for (const v of values) {
        if (!/^\d+$/.test(v) || Number(v) <= 0)
          throw new HintError(`hint ${source}: size is whole GiB, a positive integer`);
      }
    } else if (!(STRING_OPS as readonly string[]).includes(op)) {
      // Ironic treats a bare `==` on a string hint as string equality; accept the same.
      if (op === '==' || op === '=') {
        hints.push({ name, op: 's==', values: values.map((v) => normaliseValue(name, v)), source });
        continue;
      }
      if (op === '!=') {
        hints.push({ name, op: 's!=', values: values.map((v) => normaliseValue(name, v)), source });
        continue;
      }
      throw new HintError(
        `hint ${source}: ${op} is a numeric operator; ${name} takes ${STRING_OPS.join(' ')}`,
      );
    }
    hints.push({ name, op, values: values.map((v) => normaliseValue(name, v)), source });
  }
  return hints;
}

function diskValue(d: Disk, name: HintName): string | number | boolean | undefined {
  switch (name) {
    case 'size':
      return sizeGiB(d);
    case 'model':
      return d.model;
    case 'vendor':
      return d.vendor;
    case 'serial':
      return d.serial;
    case 'wwn':
      return d.wwn;
    case 'wwn_with_extension':
      return d.wwnWithExtension ?? d.wwn;
    case 'wwn_vendor_extension':
      return d.wwnVendorExtension;
    case 'name':
      return d.name;
    case 'rotational':
      return d.rotational;
    case 'hctl':
      return d.hctl;
    case 'by_path':
      return d.byPath;
    case 'tran':
      return d.tran;
  }
}

function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function hintMatches(d: Disk, h: Hint): boolean {
  const dv = diskValue(d, h.name);
  if (dv === undefined) return false;
  if (h.op === 'bool') return String(dv) === h.values[0];
  if (typeof dv === 'number') {
    const x = dv;
    const ys = h.values.map(Number);
    const y = ys[0] ?? Number.NaN;
    switch (h.op) {
      case '=': // oslo's "=" means "at least"
      case '>=':
        return x >= y;
      case '==':
        return x === y;
      case '!=':
        return x !== y;
      case '<=':
        return x <= y;
      case '>':
        return x > y;
      case '<':
        return x < y;
      case '<or>':
        return ys.includes(x);
      case '<in>':
        return String(x).includes(String(h.values[0]));
      default:
        return false;
    }
  }
  const x = String(dv).toLowerCase();
  const ys = h.values.map((v) => v.toLowerCase());
  const y = ys[0] ?? '';
  switch (h.op) {
    case 's==':
      return x === y;
    case 's!=':
      return x !== y;
    case 's>=':
      return cmpStr(x, y) >= 0;
    case 's<=':
      return cmpStr(x, y) <= 0;
    case 's>':
      return cmpStr(x, y) > 0;
    case 's<':
      return cmpStr(x, y) < 0;
    case '<in>':
      return x.includes(y);
    case '<all-in>':
      return ys.every((v) => x.includes(v));
    case '<or>':
      return ys.includes(x);
    default:
      return false;
  }
}

export interface Choice {
  disk: Disk;
  /** Why this disk, in words, for the result and the log. */
  reason: string;
}

const MIN_DEFAULT_DISK_BYTES = 4 * GIB;

/**
 * Picks the root disk. With hints: the first device (lsblk order, as Ironic) matching all of
 * them; a `name` or `by_path` hint may select devices normally skipped (loop, read-only...).
 * Without hints: the smallest candidate of at least 4 GiB (Ironic's default).
 * Throws HintError listing every disk when nothing fits.
 */
export function chooseRootDevice(disks: Disk[], hints: Hint[]): Choice {
  const named = hints.some((h) => h.name === 'name' || h.name === 'by_path');
  const pool = disks.filter((d) => (named ? d.type !== 'part' : isCandidate(d)));
  if (hints.length > 0) {
    const found = pool.find((d) => hints.every((h) => hintMatches(d, h)));
    if (found)
      return { disk: found, reason: `matches root device hints ${hints.map((h) => h.source).join(', ')}` };
    throw new HintError(
      `no disk matches root device hints ${hints.map((h) => h.source).join(', ')}; disks:\n${listDisks(disks)}`,
    );
  }
  const big = pool
    .filter((d) => d.sizeBytes >= MIN_DEFAULT_DISK_BYTES)
    .sort((a, b) => a.sizeBytes - b.sizeBytes);
  const first = big[0];
  if (first) {
    return {
      disk: first,
      reason: `no root device hints: smallest disk of at least 4 GiB (of ${big.length})`,
    };
  }
  throw new HintError(
    `no disk of at least 4 GiB found (no root device hints given); disks:\n${listDisks(disks)}`,
  );
}

function listDisks(disks: Disk[]): string {
  if (disks.length === 0) return '  (lsblk reported no block devices)';
  return disks
    .map((d) => `  ${describeDisk(d)}${isCandidate(d) ? '' : ' [skipped unless named by a hint]'}`)
    .join('\n');
}
