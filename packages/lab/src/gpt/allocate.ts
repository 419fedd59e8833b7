// Where partitions may go, the way sgdisk decides: free blocks between usable sectors,
// 2048-sector alignment (smaller when existing partitions are not so aligned), and the
// START/END values of `-n` (0 for the default, sectors, K/M/G/T/P sizes, +SIZE, -SIZE).
import { type GptTable, SECTOR } from './table.js';

const DEFAULT_ALIGNMENT = 2048;

export interface FreeBlock {
  first: number;
  last: number;
}

function used(t: GptTable): FreeBlock[] {
  return t.entries
    .filter((e) => e !== undefined)
    .map((e) => ({ first: e.firstLba, last: e.lastLba }))
    .sort((a, b) => a.first - b.first);
}

export function freeBlocks(t: GptTable): FreeBlock[] {
  const out: FreeBlock[] = [];
  let next = t.firstUsable;
  for (const u of used(t)) {
    if (u.first > next) out.push({ first: next, last: Math.min(u.first - 1, t.lastUsable) });
    next = Math.max(next, u.last + 1);
  }
  if (next <= t.lastUsable) out.push({ first: next, last: t.lastUsable });
  return out.filter((b) => b.first <= b.last);
}

export function totalFree(t: GptTable): number {
  return freeBlocks(t).reduce((n, b) => n + b.last - b.first + 1, 0);
}

export function isFree(t: GptTable, first: number, last: number): boolean {
  if (first < t.firstUsable || last > t.lastUsable || first > last) return false;
  return used(t).every((u) => u.last < first || u.first > last);
}

/** The alignment sgdisk uses: 2048, halved until every existing partition start fits it. */
export function computeAlignment(t: GptTable): number {
  let a = DEFAULT_ALIGNMENT;
  for (const u of used(t)) while (a > 1 && u.first % a !== 0) a /= 2;
  return a;
}

/** The start of the largest free block (sgdisk's default start), or undefined when the disk is full. */
export function firstInLargest(t: GptTable): number | undefined {
  let best: FreeBlock | undefined;
  for (const b of freeBlocks(t)) if (!best || b.last - b.first > best.last - best.first) best = b;
  return best?.first;
}

/** The last sector of the free block holding `sector` (sgdisk's default end). */
export function lastInFree(t: GptTable, sector: number): number {
  const b = freeBlocks(t).find((f) => f.first <= sector && sector <= f.last);
  return b ? b.last : sector;
}

/**
 * Moves `sector` onto an alignment boundary the way sgdisk does: down when every sector in
 * between is free, else up under the same condition, else leaves it.
 */
export function align(t: GptTable, sector: number, alignment: number): number {
  if (sector % alignment === 0) return sector;
  const down = sector - (sector % alignment);
  if (isFree(t, down, sector)) return down;
  const up = down + alignment;
  if (isFree(t, sector, up)) return up;
  return sector;
}

const UNITS: Record<string, number> = {
  K: 2 ** 10,
  M: 2 ** 20,
  G: 2 ** 30,
  T: 2 ** 40,
  P: 2 ** 50,
  E: 2 ** 60,
};

export interface SectorBases {
  /** What 0 (also +0, -0, 0M) means. */
  dflt: number;
  /** Where +SIZE counts from (the start sector for an END). */
  base: number;
  /** Where -SIZE counts back from (the end of the free block). */
  high: number;
  /**
   * Whether +SIZE ends on the last sector of SIZE (base + SIZE - 1): true for an END; for a
   * START the caller decides (see sgdisk-run.ts).
   */
  inclusive: boolean;
}

/**
 * A START or END value of `-n`: sectors, or a size with a K/M/G/T/P/E suffix (only the first
 * letter after the number counts), optionally +relative or -from-the-end. Text that does not
 * start with a number, or -SIZE past the block, gives 0 (a sector GPT always uses), as sgdisk.
 */
export function parseSectorValue(text: string, { dflt, base, high, inclusive }: SectorBases): number {
  const m = /^\s*([+-]?)(\d+)(\S?)/.exec(text);
  if (!m) return 0;
  const [, sign, digits, suffix = ''] = m;
  const n = Number(digits);
  if (n === 0) return dflt;
  const unit = UNITS[suffix.toUpperCase()];
  const sectors = unit ? Math.floor((n * unit) / SECTOR) : n;
  if (sign === '+') return base + sectors - (inclusive ? 1 : 0);
  if (sign === '-') return sectors > high ? 0 : high - sectors;
  return sectors;
}
