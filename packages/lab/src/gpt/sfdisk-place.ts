// Where sfdisk (util-linux 2.38) puts a GPT partition from a script line, as observed on
// disk images: a start given in sectors or bytes is kept as given; the default start is the
// first sector of the largest free block, aligned up to the grain (1 MiB); a size in sectors
// is exact, a size with a unit has its end moved to the nearest grain boundary; the default
// size fills the free block, its end aligned down when that block runs to the last usable
// sector. The lab's comparison test holds these rules to the real sfdisk.
import { freeBlocks, isFree } from './allocate.js';
import type { PartitionSpec } from './sfdisk-script.js';
import type { GptTable } from './table.js';

/** 1 MiB in 512-byte sectors: sfdisk's default alignment. */
const GRAIN = 2048;

export type Placement = { first: number; last: number } | { errors: string[]; errno: 'ERANGE' | 'EINVAL' | 'ENOSPC' };

const alignUp = (x: number) => Math.ceil(x / GRAIN) * GRAIN;
const alignDown = (x: number) => Math.floor(x / GRAIN) * GRAIN;

function defaultStart(t: GptTable): number | undefined {
  const blocks = freeBlocks(t);
  let largest = blocks[0];
  for (const b of blocks) if (largest && b.last - b.first > largest.last - largest.first) largest = b;
  for (const b of largest ? [largest, ...blocks] : []) {
    const s = alignUp(b.first);
    if (s <= b.last) return s;
  }
  return undefined;
}

/** A unit-sized partition's end, moved so the sector after it is the nearest grain boundary. */
function alignedEnd(first: number, last: number): number {
  const next = last + 1;
  const lower = alignDown(next);
  const upper = lower + GRAIN;
  const pick = next - lower <= upper - next && lower > first ? lower : upper;
  return next === lower ? last : pick - 1;
}

function defaultEnd(t: GptTable, first: number): number {
  const block = freeBlocks(t).find((b) => b.first <= first && first <= b.last);
  const end = block?.last ?? first;
  if (end !== t.lastUsable) return end; // up to the next partition, whose start is what it is
  const aligned = alignDown(t.lastUsable + 1) - 1;
  return aligned >= first ? aligned : Math.max(first, t.lastUsable - 1);
}

export function placePartition(t: GptTable, spec: PartitionSpec): Placement {
  let first: number;
  if (spec.start) {
    first = spec.start.sectors;
    if (!isFree(t, first, first)) return { errors: [`Sector ${first} already used.`], errno: 'ERANGE' };
  } else {
    const s = defaultStart(t);
    if (s === undefined) return { errors: ['No free sectors available.'], errno: 'ENOSPC' };
    first = s;
  }
  let last: number;
  if (spec.size) {
    if (spec.size.sectors < 1) return { errors: [], errno: 'EINVAL' };
    last = first + spec.size.sectors - 1;
    if (spec.size.unit) last = alignedEnd(first, last);
    if (last > t.lastUsable) {
      return { errors: [`The last usable GPT sector is ${t.lastUsable}, but ${last} is requested.`], errno: 'EINVAL' };
    }
  } else last = defaultEnd(t, first);
  if (!isFree(t, first, last)) return { errors: [], errno: 'ERANGE' };
  return { first, last };
}
