// Size-bounded LRU eviction for the image cache: least recently used images (by mtime, which
// the cache touches on every use) go first, never one that is in use or being downloaded.
import { readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';

export interface CacheEntry {
  file: string;
  size: number;
  usedMs: number;
}

/** Which entries to delete so the rest fit in maxBytes; pure, for tests. */
export function chooseEvictions(
  entries: CacheEntry[],
  maxBytes: number,
  keep: ReadonlySet<string>,
): CacheEntry[] {
  let total = entries.reduce((s, e) => s + e.size, 0);
  const out: CacheEntry[] = [];
  for (const e of [...entries].sort((a, b) => a.usedMs - b.usedMs)) {
    if (total <= maxBytes) break;
    if (keep.has(e.file)) continue;
    out.push(e);
    total -= e.size;
  }
  return out;
}

async function listEntries(dir: string): Promise<CacheEntry[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const out: CacheEntry[] = [];
  for (const n of names) {
    if (!n.endsWith('.img')) continue;
    const st = await stat(join(dir, n)).catch(() => undefined);
    if (st?.isFile()) out.push({ file: join(dir, n), size: st.size, usedMs: st.mtimeMs });
  }
  return out;
}

export async function evict(dir: string, maxBytes: number, keep: ReadonlySet<string>): Promise<string[]> {
  const victims = chooseEvictions(await listEntries(dir), maxBytes, keep);
  for (const v of victims) {
    await unlink(v.file).catch(() => undefined);
    // A converted raw image's recorded checksum goes with it.
    await unlink(`${v.file}.sha256`).catch(() => undefined);
  }
  return victims.map((v) => v.file);
}
