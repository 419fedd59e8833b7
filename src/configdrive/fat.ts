// A small FAT16 writer: the EFI system image an El Torito UEFI boot entry points at (the
// firmware reads only FAT there, never ISO 9660). Long names as VFAT entries (the firmware's FAT
// driver and every reader match them case-insensitively), fixed dates for byte-identical
// images, files laid out in the order given so small configuration files sit at the front.
// FAT16 because the UEFI specification names FAT12/16 for removable media and its cluster
// count (4085..65524) covers 2 MiB to 2 GiB, which every kernel-and-initrd pair fits.
import { TsbmError } from '../errors.js';

export interface FatFileInput {
  path: string;
  data: Buffer;
}

export interface FatOptions {
  /** Volume label, 1-11 characters (upper-cased). */
  label: string;
}

const SECTOR = 512;
const RESERVED = 1;
const FATS = 2;
const ROOT_ENTRIES = 512;
const ROOT_SECTORS = (ROOT_ENTRIES * 32) / SECTOR;
const MIN_CLUSTERS = 4085;
const MAX_CLUSTERS = 65524;
/** 2000-01-01 00:00 in FAT's date format (years since 1980, month, day). */
const FAT_DATE = ((2000 - 1980) << 9) | (1 << 5) | 1;
const ATTR_DIR = 0x10;
const ATTR_ARCHIVE = 0x20;
const ATTR_LABEL = 0x08;
const ATTR_LFN = 0x0f;

interface FileNode {
  kind: 'file';
  name: string;
  data: Buffer;
  cluster: number;
}
interface DirNode {
  kind: 'dir';
  name: string;
  parent: DirNode | undefined;
  children: (DirNode | FileNode)[];
  cluster: number;
  /** The 32-byte entries, built once names are known. */
  entries: Buffer[];
}

function fatError(message: string): TsbmError {
  return new TsbmError('runtime', `EFI boot image: ${message}`, { hint: 'the kernel and initrd together must be under 2 GiB; file names plain ASCII' });
}

const VALID_SHORT = /^[A-Z0-9_$~!#%&'(){}@^`-]{1,8}(\.[A-Z0-9_$~!#%&'(){}@^`-]{1,3})?$/;

/** The 8.3 short name, and whether a long name entry must carry the real one. */
function shortName(name: string, taken: Set<string>): { short: Buffer; needsLong: boolean } {
  const pack = (base: string, ext: string) => Buffer.from(base.padEnd(8, ' ') + ext.padEnd(3, ' '), 'latin1');
  if (VALID_SHORT.test(name)) {
    const [base = '', ext = ''] = name.split('.');
    taken.add(name);
    return { short: pack(base, ext), needsLong: false };
  }
  const clean = (s: string) => s.toUpperCase().replace(/[^A-Z0-9_$~!#%&'(){}@^`-]/g, '');
  const dot = name.lastIndexOf('.');
  const base = clean(dot > 0 ? name.slice(0, dot) : name) || 'FILE';
  const ext = dot > 0 ? clean(name.slice(dot + 1)).slice(0, 3) : '';
  for (let n = 1; n < 1000; n++) {
    const tail = `~${n}`;
    const candidate = `${base.slice(0, 8 - tail.length)}${tail}`;
    const key = ext ? `${candidate}.${ext}` : candidate;
    if (!taken.has(key)) {
      taken.add(key);
      return { short: pack(candidate, ext), needsLong: true };
    }
  }
  throw fatError(`too many names like ${name} in one directory`);
}

function shortChecksum(short: Buffer): number {
  let sum = 0;
  for (let i = 0; i < 11; i++) sum = (((sum & 1) << 7) + (sum >> 1) + short[i]!) & 0xff;
  return sum;
}

/** VFAT long name entries for `name`, last part first as they are stored. */
function longEntries(name: string, short: Buffer): Buffer[] {
  const units: number[] = [...name].map((c) => c.charCodeAt(0));
  const count = Math.ceil(units.length / 13);
  const padded = [...units, ...(units.length % 13 ? [0] : [])];
  while (padded.length < count * 13) padded.push(0xffff);
  const sum = shortChecksum(short);
  const out: Buffer[] = [];
  for (let i = count; i >= 1; i--) {
    const e = Buffer.alloc(32);
    e[0] = i | (i === count ? 0x40 : 0);
    const part = padded.slice((i - 1) * 13, i * 13);
    // A long name entry keeps its 13 UTF-16 units in three runs: 5 at 1, 6 at 14, 2 at 28.
    part.forEach((u, k) => {
      e.writeUInt16LE(u, k < 5 ? 1 + k * 2 : k < 11 ? 14 + (k - 5) * 2 : 28 + (k - 11) * 2);
    });
    e[11] = ATTR_LFN;
    e[13] = sum;
    out.push(e);
  }
  return out;
}

function dirEntry(short: Buffer, attr: number, cluster: number, size: number): Buffer {
  const e = Buffer.alloc(32);
  short.copy(e, 0);
  e[11] = attr;
  e.writeUInt16LE(FAT_DATE, 16); // created
  e.writeUInt16LE(FAT_DATE, 18); // accessed
  e.writeUInt16LE(FAT_DATE, 24); // written
  e.writeUInt16LE(cluster, 26);
  e.writeUInt32LE(size, 28);
  return e;
}

function buildTree(files: readonly FatFileInput[]): { root: DirNode; order: (DirNode | FileNode)[] } {
  const root: DirNode = { kind: 'dir', name: '', parent: undefined, children: [], cluster: 0, entries: [] };
  const order: (DirNode | FileNode)[] = [];
  for (const f of files) {
    const parts = f.path.replace(/^\/+/, '').split('/');
    let dir = root;
    parts.forEach((part, i) => {
      if (!/^[\x21-\x7e][\x20-\x7e]{0,99}$/.test(part) || part === '.' || part === '..' || /[\\:*?"<>|]/.test(part)) throw fatError(`cannot store the name "${f.path}"`);
      const existing = dir.children.find((c) => c.name.toUpperCase() === part.toUpperCase());
      if (i === parts.length - 1) {
        if (existing) throw fatError(`"${f.path}" is given twice`);
        const node: FileNode = { kind: 'file', name: part, data: f.data, cluster: 0 };
        dir.children.push(node);
        order.push(node);
        return;
      }
      if (existing?.kind === 'file') throw fatError(`"${f.path}" runs through a file`);
      if (existing) {
        dir = existing;
        return;
      }
      const sub: DirNode = { kind: 'dir', name: part, parent: dir, children: [], cluster: 0, entries: [] };
      dir.children.push(sub);
      order.push(sub);
      dir = sub;
    });
  }
  return { root, order };
}

export function buildFat(files: readonly FatFileInput[], opts: FatOptions): Buffer {
  const label = opts.label.toUpperCase();
  if (!/^[A-Z0-9 _-]{1,11}$/.test(label)) throw fatError(`volume label "${opts.label}" is not 1-11 letters, digits, _ or -`);
  const { root, order } = buildTree(files);
  const dirs = [root, ...order.filter((n): n is DirNode => n.kind === 'dir')];
  // Directory entries first: their count decides how many clusters each directory takes.
  for (const d of dirs) {
    const taken = new Set<string>();
    if (d === root) d.entries.push(dirEntry(Buffer.from(label.padEnd(11, ' '), 'latin1'), ATTR_LABEL, 0, 0));
    else d.entries.push(Buffer.alloc(32), Buffer.alloc(32)); // . and .., filled in below
    for (const c of d.children) {
      const { short, needsLong } = shortName(c.name, taken);
      if (needsLong) d.entries.push(...longEntries(c.name, short));
      d.entries.push(short); // completed below, once clusters are known
    }
  }
  if (root.entries.length > ROOT_ENTRIES) throw fatError(`more than ${ROOT_ENTRIES} entries at the top level`);

  const bytesOf = (n: DirNode | FileNode) => (n.kind === 'dir' ? n.entries.length * 32 : n.data.length);
  const total = order.reduce((s, n) => s + bytesOf(n), 0);
  let perCluster = 1;
  const clustersFor = (bytes: number, spc: number) => Math.ceil(bytes / (spc * SECTOR));
  const needed = (spc: number) => order.reduce((s, n) => s + clustersFor(bytesOf(n), spc), 0);
  while (needed(perCluster) > MAX_CLUSTERS - 16) {
    perCluster *= 2;
    if (perCluster > 64) throw fatError(`${total} bytes are more than a FAT16 volume holds`);
  }
  const clusters = Math.min(MAX_CLUSTERS, Math.max(MIN_CLUSTERS + 11, needed(perCluster) + 16));
  const fatSectors = Math.ceil(((clusters + 2) * 2) / SECTOR);
  const dataStart = RESERVED + FATS * fatSectors + ROOT_SECTORS;
  const totalSectors = dataStart + clusters * perCluster;
  const img = Buffer.alloc(totalSectors * SECTOR);
  const fat = Buffer.alloc(fatSectors * SECTOR);
  fat.writeUInt16LE(0xfff8, 0);
  fat.writeUInt16LE(0xffff, 2);

  // Clusters in the order given: directories and small files first when listed first.
  let next = 2;
  for (const n of order) {
    const count = clustersFor(bytesOf(n), perCluster);
    if (count === 0) continue;
    n.cluster = next;
    for (let k = 0; k < count; k++) fat.writeUInt16LE(k === count - 1 ? 0xffff : next + k + 1, (next + k) * 2);
    next += count;
  }

  // Complete each directory's entries now that every cluster is known.
  for (const d of dirs) {
    let i = d === root ? 1 : 2;
    if (d !== root) {
      d.entries[0] = dirEntry(Buffer.from('.          ', 'latin1'), ATTR_DIR, d.cluster, 0);
      d.entries[1] = dirEntry(Buffer.from('..         ', 'latin1'), ATTR_DIR, d.parent === root ? 0 : (d.parent?.cluster ?? 0), 0);
    }
    for (const c of d.children) {
      while (d.entries[i]![11] === ATTR_LFN) i++;
      const short = d.entries[i]!;
      d.entries[i] = c.kind === 'dir' ? dirEntry(short, ATTR_DIR, c.cluster, 0) : dirEntry(short, ATTR_ARCHIVE, c.cluster, c.data.length);
      i++;
    }
  }

  const boot = img.subarray(0, SECTOR);
  Buffer.from([0xeb, 0x3c, 0x90]).copy(boot, 0);
  boot.write('TSBM    ', 3, 'latin1');
  boot.writeUInt16LE(SECTOR, 11);
  boot[13] = perCluster;
  boot.writeUInt16LE(RESERVED, 14);
  boot[16] = FATS;
  boot.writeUInt16LE(ROOT_ENTRIES, 17);
  if (totalSectors < 0x10000) boot.writeUInt16LE(totalSectors, 19);
  else boot.writeUInt32LE(totalSectors, 32);
  boot[21] = 0xf8;
  boot.writeUInt16LE(fatSectors, 22);
  boot.writeUInt16LE(32, 24);
  boot.writeUInt16LE(64, 26);
  boot[36] = 0x80;
  boot[38] = 0x29;
  boot.writeUInt32LE(0x7e5b0001, 39); // fixed serial: same input, same bytes
  boot.write(label.padEnd(11, ' '), 43, 'latin1');
  boot.write('FAT16   ', 54, 'latin1');
  boot[510] = 0x55;
  boot[511] = 0xaa;
  for (let f = 0; f < FATS; f++) fat.copy(img, (RESERVED + f * fatSectors) * SECTOR);
  Buffer.concat(root.entries).copy(img, (RESERVED + FATS * fatSectors) * SECTOR);
  const at = (cluster: number) => (dataStart + (cluster - 2) * perCluster) * SECTOR;
  for (const n of order) {
    if (!n.cluster) continue;
    (n.kind === 'dir' ? Buffer.concat(n.entries) : n.data).copy(img, at(n.cluster));
  }
  return img;
}
