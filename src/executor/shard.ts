// `tsbm run --shard I/N`: a stable slice of the targeted hosts so a fleet can be split across
// parallel CI jobs or Kubernetes Indexed Job pods with no coordination (the node locks catch
// overlaps). A host belongs to shard (fnv1a32(name) mod N) + 1: it depends only on the host's
// name and N, never on the inventory's order or on which other hosts exist.
import { TsbmError } from '../errors.js';

export interface Shard {
  index: number; // 1-based
  total: number;
}

export function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(s, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export function shardOf(host: string, total: number): number {
  return (fnv1a32(host) % total) + 1;
}

export function inShard(host: string, shard: Shard | undefined): boolean {
  return !shard || shardOf(host, shard.total) === shard.index;
}

export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = m ? Number(m[1]) : NaN;
  const total = m ? Number(m[2]) : NaN;
  if (!m || total < 1 || index < 1 || index > total || total > 10_000) {
    throw new TsbmError('options', `--shard must be I/N with 1 <= I <= N <= 10000, got "${text}"`, {
      hint: 'e.g. --shard 2/8 runs the second of eight slices (CI_NODE_INDEX/CI_NODE_TOTAL)',
    });
  }
  return { index, total };
}
