import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { batches } from '../../src/executor/serial.js';
import { comparePaths } from '../../src/executor/strategy-linear.js';
import { shouldRun } from '../../src/executor/tags.js';
import { matchesName } from '../../src/executor/start-at.js';

const hosts = (n: number) => Array.from({ length: n }, (_, i) => `h${i}`);

describe('serial batches', () => {
  it('numbers, percentages and lists (last entry repeats)', () => {
    expect(batches(hosts(5), [2]).map((b) => b.length)).toEqual([2, 2, 1]);
    expect(batches(hosts(10), ['30%']).map((b) => b.length)).toEqual([3, 3, 3, 1]);
    expect(batches(hosts(10), [1, '50%']).map((b) => b.length)).toEqual([1, 5, 4]);
    expect(batches(hosts(3), ['10%']).map((b) => b.length)).toEqual([1, 1, 1]);
    expect(batches(hosts(3), undefined)).toEqual([hosts(3)]);
    expect(batches([], [2])).toEqual([]);
  });
  it('every host lands in exactly one batch, in order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 60 }),
        fc.array(fc.oneof(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 100 }).map((p) => `${p}%`)), { minLength: 1, maxLength: 4 }),
        (n, spec) => {
          expect(batches(hosts(n), spec).flat()).toEqual(hosts(n));
        },
      ),
    );
  });
});

describe('tag selection', () => {
  const f = (tags: string[], skipTags: string[] = []) => ({ tags, skipTags });
  it('follows Ansible for always, never, all, tagged, untagged', () => {
    expect(shouldRun([], f([]))).toBe(true);
    expect(shouldRun(['never'], f([]))).toBe(false);
    expect(shouldRun(['never', 'x'], f(['x']))).toBe(true);
    expect(shouldRun(['never', 'x'], f(['all']))).toBe(false);
    expect(shouldRun(['always'], f(['x']))).toBe(true);
    expect(shouldRun(['always'], f(['x'], ['always']))).toBe(false);
    expect(shouldRun(['a'], f(['tagged']))).toBe(true);
    expect(shouldRun([], f(['tagged']))).toBe(false);
    expect(shouldRun([], f(['untagged']))).toBe(true);
    expect(shouldRun(['a', 'b'], f(['b'], ['a']))).toBe(false);
  });
});

describe('step order and --start-at-task names', () => {
  it('compares tree paths lexicographically, a parent before its children', () => {
    expect(comparePaths([2, 0, 0, 1], [2, 0, 1, 0])).toBe(-1);
    expect(comparePaths([2, 1], [2, 1, 0])).toBeLessThan(0);
    expect(comparePaths([0, Number.POSITIVE_INFINITY], [1, 0])).toBe(-1);
    expect(comparePaths([3], [3])).toBe(0);
  });
  it('matches exact names and * globs', () => {
    expect(matchesName('Install bootc', 'Install*')).toBe(true);
    expect(matchesName('Install bootc', 'install*')).toBe(false);
    expect(matchesName('a.b', 'a.b')).toBe(true);
    expect(matchesName('axb', 'a.b')).toBe(false);
    expect(matchesName(undefined, '*')).toBe(false);
  });
});
