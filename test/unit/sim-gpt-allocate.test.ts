// Where the sgdisk stand-in puts partitions: START/END values, 2048-sector alignment, free
// blocks, and sgdisk's size format. Expected numbers were taken from gdisk 1.0.9's sgdisk.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  align,
  computeAlignment,
  firstInLargest,
  freeBlocks,
  isFree,
  lastInFree,
  parseSectorValue,
  totalFree,
} from '../../packages/lab/src/gpt/allocate.js';
import { ieeeSize } from '../../packages/lab/src/gpt/print.js';
import { type GptTable, newTable } from '../../packages/lab/src/gpt/table.js';

const DISK = 204800; // a 100 MiB disk: usable 34..204766

function withPartitions(parts: [number, number][]): GptTable {
  const t = newTable(DISK);
  parts.forEach(([firstLba, lastLba], i) => {
    t.entries[i] = {
      typeGuid: '0FC63DAF-8483-4772-8E79-3D69D8477DE4',
      uniqueGuid: '00000000-0000-4000-8000-000000000001',
      firstLba,
      lastLba,
      attributes: 0n,
      name: '',
    };
  });
  return t;
}

describe('START/END values', () => {
  const bases = { dflt: 2048, base: 2048, high: 204766, inclusive: true };
  it.each([
    ['0', 2048],
    ['+0', 2048],
    ['+1000', 3047],
    ['+1000K', 4047],
    ['+512M', 2048 + 1048576 - 1],
    ['-10M', 204766 - 20480],
    ['10M', 20480],
    ['20M', 40960],
    ['8257536', 8257536],
  ])('%s -> %i', (text, want) => {
    expect(parseSectorValue(text, bases)).toBe(want);
  });
  it('END 0 is the end of the free block; +SIZE counts from the start given', () => {
    expect(parseSectorValue('0', { dflt: 204766, base: 2049, high: 204766, inclusive: true })).toBe(204766);
    expect(parseSectorValue('+1M', { dflt: 204766, base: 2049, high: 204766, inclusive: true })).toBe(4096);
  });
  it('a START +SIZE adds SIZE whole from an aligned default, SIZE - 1 from an unaligned one (sgdisk 1.0.9)', () => {
    expect(parseSectorValue('+1000', { dflt: 2048, base: 2048, high: 20446, inclusive: false })).toBe(3048);
    expect(parseSectorValue('+1000', { dflt: 34, base: 34, high: 2021, inclusive: true })).toBe(1033);
  });
  it('text that is not a number, or -SIZE past the block, is 0; suffix letters past the first are ignored', () => {
    expect(parseSectorValue('abc', bases)).toBe(0);
    expect(parseSectorValue('-999999', bases)).toBe(0);
    expect(parseSectorValue('0M', bases)).toBe(2048);
    expect(parseSectorValue('10MiB', bases)).toBe(20480);
  });
});

describe('alignment and free space', () => {
  it('aligns down when the sectors between are free, else up, else leaves it', () => {
    const empty = newTable(DISK);
    expect(align(empty, 2049, 2048)).toBe(2048);
    expect(align(empty, 34, 2048)).toBe(2048);
    const t = withPartitions([[2048, 204766]]);
    expect(align(t, 34, 2048)).toBe(34); // no boundary inside 34..2047
  });

  it('default start is the largest free block, aligned', () => {
    const t = withPartitions([[2048, 4095]]);
    expect(freeBlocks(t)).toEqual([
      { first: 34, last: 2047 },
      { first: 4096, last: 204766 },
    ]);
    expect(firstInLargest(t)).toBe(4096);
    expect(lastInFree(t, 4096)).toBe(204766);
    expect(totalFree(t)).toBe(204766 - 4096 + 1 + 2047 - 34 + 1);
    expect(isFree(t, 4000, 5000)).toBe(false);
  });

  it('alignment shrinks to what existing partitions use', () => {
    expect(computeAlignment(newTable(DISK))).toBe(2048);
    expect(
      computeAlignment(
        withPartitions([
          [2048, 3000],
          [3008, 4000],
        ]),
      ),
    ).toBe(64);
  });

  it('free blocks and used partitions always tile the usable area', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 34, max: 204766 }), fc.integer({ min: 0, max: 5000 })), {
          maxLength: 8,
        }),
        (raw) => {
          const parts: [number, number][] = [];
          for (const [s, len] of raw) {
            const e = Math.min(s + len, 204766);
            if (parts.every(([a, b]) => e < a || s > b)) parts.push([s, e]);
          }
          const t = withPartitions(parts);
          const usedSectors = parts.reduce((n, [a, b]) => n + b - a + 1, 0);
          expect(totalFree(t) + usedSectors).toBe(204766 - 34 + 1);
          for (const b of freeBlocks(t)) expect(isFree(t, b.first, b.last)).toBe(true);
        },
      ),
    );
  });
});

describe('sizes as sgdisk prints them', () => {
  it.each([
    [512 * 1024 * 1024, '512.0 MiB'],
    [1024 * 1024 * 1024, '1024.0 MiB'],
    [4 * 1024 ** 3, '4.0 GiB'],
    [2.7 * 1024 ** 3, '2.7 GiB'],
    [1000 * 1024, '1000.0 KiB'],
    [1007 * 1024, '1007.0 KiB'],
    [1000, '1000 bytes'],
    [1024, '1024 bytes'],
    [0, '0 bytes'],
  ])('%i -> %s', (bytes, text) => {
    expect(ieeeSize(bytes)).toBe(text);
  });
});
