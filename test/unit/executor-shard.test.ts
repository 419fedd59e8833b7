import { describe, expect, it } from 'vitest';
import { fnv1a32, inShard, parseShard, shardOf } from '../../src/executor/shard.js';

describe('--shard', () => {
  it('uses the documented FNV-1a hash', () => {
    // Reference values of 32-bit FNV-1a.
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });
  it('puts every host in exactly one shard, spread evenly, independent of the others', () => {
    const hosts = Array.from({ length: 1000 }, (_, i) => `node${String(i).padStart(4, '0')}`);
    const counts = [0, 0, 0, 0];
    for (const h of hosts) {
      const owners = [1, 2, 3, 4].filter((i) => inShard(h, { index: i, total: 4 }));
      expect(owners).toHaveLength(1);
      counts[owners[0]! - 1]!++;
    }
    for (const c of counts) expect(c).toBeGreaterThan(200);
    expect(shardOf('node0042', 4)).toBe(shardOf('node0042', 4));
  });
  it('rejects malformed specs with a hint', () => {
    expect(parseShard('2/8')).toEqual({ index: 2, total: 8 });
    for (const bad of ['0/2', '3/2', '1/0', 'a/b', '1-2']) expect(() => parseShard(bad)).toThrow(/I\/N/);
  });
});
