// A minimal FAT12/16 reader: the files of an EFI boot image as a firmware sees them (long
// names assembled, short names otherwise). The simulated lab reads a built installer ISO's boot
// configuration with it, and tests read back what fat.ts wrote. Bounded: a few directory levels,
// cluster chains that loop or leave the image are cut off.
export interface FatFile {
  path: string;
  data: Buffer;
}

const MAX_DEPTH = 8;

export function isFat(img: Buffer): boolean {
  return img.length >= 512 && img[510] === 0x55 && img[511] === 0xaa && /^FAT1[26]/.test(img.toString('latin1', 54, 59));
}

export function readFatFiles(img: Buffer): FatFile[] {
  if (!isFat(img)) return [];
  const bps = img.readUInt16LE(11);
  const spc = img[13] ?? 1;
  const reserved = img.readUInt16LE(14);
  const fats = img[16] ?? 2;
  const rootEntries = img.readUInt16LE(17);
  const total = img.readUInt16LE(19) || img.readUInt32LE(32);
  const fatSectors = img.readUInt16LE(22);
  if (!bps || !spc || !fatSectors) return [];
  const rootStart = (reserved + fats * fatSectors) * bps;
  const dataStart = rootStart + Math.ceil((rootEntries * 32) / bps) * bps;
  const clusterBytes = spc * bps;
  const clusterCount = Math.floor((total * bps - dataStart) / clusterBytes);
  const fat12 = clusterCount < 4085;
  const fatAt = reserved * bps;
  const nextOf = (c: number): number => {
    if (fat12) {
      const v = img.readUInt16LE(fatAt + Math.floor(c * 1.5));
      return c & 1 ? v >> 4 : v & 0xfff;
    }
    return img.readUInt16LE(fatAt + c * 2);
  };
  const end = fat12 ? 0xff8 : 0xfff8;
  const chain = (first: number, size?: number): Buffer => {
    const parts: Buffer[] = [];
    const seen = new Set<number>();
    for (let c = first; c >= 2 && c < end && !seen.has(c) && c < clusterCount + 2; c = nextOf(c)) {
      seen.add(c);
      const off = dataStart + (c - 2) * clusterBytes;
      if (off + clusterBytes > img.length) break;
      parts.push(img.subarray(off, off + clusterBytes));
      if (size !== undefined && parts.length * clusterBytes >= size) break;
    }
    const all = Buffer.concat(parts);
    return size === undefined ? all : all.subarray(0, size);
  };
  const out: FatFile[] = [];
  const walk = (dir: Buffer, prefix: string, depth: number) => {
    let long: string[] = [];
    for (let off = 0; off + 32 <= dir.length; off += 32) {
      const e = dir.subarray(off, off + 32);
      if (e[0] === 0) break;
      if (e[0] === 0xe5) {
        long = [];
        continue;
      }
      const attr = e[11] ?? 0;
      if (attr === 0x0f) {
        const units: number[] = [];
        for (const [a, n] of [[1, 5], [14, 6], [28, 2]] as const) for (let k = 0; k < n; k++) units.push(e.readUInt16LE(a + k * 2));
        const cut = units.indexOf(0);
        const part = String.fromCharCode(...(cut >= 0 ? units.slice(0, cut) : units));
        if ((e[0]! & 0x40) !== 0) long = [];
        long.unshift(part);
        continue;
      }
      if (attr & 0x08) {
        long = [];
        continue;
      }
      // Windows NT's case bits (byte 12): an all-lowercase name kept without a long name entry,
      // as mtools and Windows write "grubx64.efi".
      const lowerBase = ((e[12] ?? 0) & 0x08) !== 0;
      const lowerExt = ((e[12] ?? 0) & 0x10) !== 0;
      const rawBase = e.toString('latin1', 0, 8).trimEnd();
      const rawExt = e.toString('latin1', 8, 11).trimEnd();
      const base = lowerBase ? rawBase.toLowerCase() : rawBase;
      const ext = lowerExt ? rawExt.toLowerCase() : rawExt;
      const name = long.length ? long.join('') : ext ? `${base}.${ext}` : base;
      long = [];
      if (name === '.' || name === '..') continue;
      const cluster = e.readUInt16LE(26);
      const path = prefix ? `${prefix}/${name}` : name;
      if (attr & 0x10) {
        if (depth < MAX_DEPTH) walk(chain(cluster), path, depth + 1);
      } else {
        const size = e.readUInt32LE(28);
        out.push({ path, data: size === 0 ? Buffer.alloc(0) : Buffer.from(chain(cluster, size)) });
      }
    }
  };
  walk(img.subarray(rootStart, Math.min(dataStart, img.length)), '', 0);
  return out;
}

/** The file at `path` (matched case-insensitively, as firmware does), if any. */
export function fatFile(files: FatFile[], path: string): Buffer | undefined {
  return files.find((f) => f.path.toLowerCase() === path.toLowerCase())?.data;
}
