// A small ISO 9660 writer: primary tree with Rock Ridge (exact POSIX names and modes) plus a
// Joliet tree (exact names for Windows-style readers), both pointing at the same file data.
// Enough for config drives (volume id `config-2`) and, with an El Torito UEFI entry
// (efiBootImage), for an installer's boot ISO; no multi-extent files.
import { TsbmError } from '../errors.js';
import { bootCatalog, bootRecord } from './el-torito.js';
import {
  SECTOR,
  asciiField,
  both16,
  both32,
  recordDate,
  sectorsFor,
  ucs2Field,
  ucs2be,
  volumeDate,
} from './iso9660-encode.js';
import {
  type DirNode,
  type FileNode,
  type IsoFileInput,
  buildTree,
  dirsInPathTableOrder,
} from './iso9660-tree.js';
import { S_IFDIR, S_IFREG, ceEntry, erEntry, nmEntry, pxEntry, rrEntry, spEntry } from './rock-ridge.js';

export type { IsoFileInput } from './iso9660-tree.js';

export interface IsoOptions {
  volumeId: string;
  /** Recording date of every record; fixed dates give byte-identical images. Default: now. */
  date?: Date;
  publisher?: string;
  /**
   * A FAT image for an El Torito UEFI boot entry (no emulation). It is placed before the
   * files, so a reader of the image's head (a BMC, the simulated lab) finds it.
   */
  efiBootImage?: Buffer;
}

/** The most an ISO written here may hold (a config drive partition is 64 MiB). */
const MAX_TOTAL = 1024 * 1024 * 1024;

// 0-15 system area, 16 PVD, 17 Joliet SVD, 18 terminator, 19 Rock Ridge ER. With El Torito the
// Boot Record takes 17 (where the specification puts it) and the rest move up by one.
const layoutOf = (elTorito: boolean) => {
  const shift = elTorito ? 1 : 0;
  return { joliet: 17 + shift, terminator: 18 + shift, er: 19 + shift, firstFree: 20 + shift };
};
const DIR_MODE = S_IFDIR | 0o555;
const FILE_MODE = S_IFREG | 0o444;

interface Rec {
  id: Buffer;
  target: DirNode | FileNode;
  isDir: boolean;
  su: Buffer;
}

const subdirCount = (d: DirNode) => [...d.children.values()].filter((c) => c.kind === 'dir').length;
const pxFor = (n: DirNode | FileNode) =>
  n.kind === 'dir' ? pxEntry(DIR_MODE, 2 + subdirCount(n)) : pxEntry(FILE_MODE, 1);
// Joliet names carry no ";1" version, as genisoimage writes them (`isoinfo -J -x /path` then matches).
const jolietId = (n: DirNode | FileNode) => ucs2be(n.name);
const recLength = (r: Rec) => {
  const base = 33 + r.id.length + (r.id.length % 2 === 0 ? 1 : 0);
  return base + r.su.length + (r.su.length % 2);
};

function primaryRecords(dir: DirNode, erSector: number, erLength: number): Rec[] {
  const parent = dir.parent ?? dir;
  const dotSu = dir.parent
    ? Buffer.concat([rrEntry(false), pxFor(dir)])
    : Buffer.concat([spEntry(), rrEntry(false), pxFor(dir), ceEntry(erSector, 0, erLength)]);
  const recs: Rec[] = [
    { id: Buffer.from([0]), target: dir, isDir: true, su: dotSu },
    { id: Buffer.from([1]), target: parent, isDir: true, su: Buffer.concat([rrEntry(false), pxFor(parent)]) },
  ];
  const kids = [...dir.children.values()].sort((a, b) =>
    a.isoName < b.isoName ? -1 : a.isoName > b.isoName ? 1 : 0,
  );
  for (const k of kids) {
    recs.push({
      id: Buffer.from(k.isoName, 'latin1'),
      target: k,
      isDir: k.kind === 'dir',
      su: Buffer.concat([rrEntry(true), pxFor(k), nmEntry(k.name)]),
    });
  }
  return recs;
}

function jolietRecords(dir: DirNode): Rec[] {
  const recs: Rec[] = [
    { id: Buffer.from([0]), target: dir, isDir: true, su: Buffer.alloc(0) },
    { id: Buffer.from([1]), target: dir.parent ?? dir, isDir: true, su: Buffer.alloc(0) },
  ];
  const kids = [...dir.children.values()].sort((a, b) => Buffer.compare(jolietId(a), jolietId(b)));
  for (const k of kids)
    recs.push({ id: jolietId(k), target: k, isDir: k.kind === 'dir', su: Buffer.alloc(0) });
  return recs;
}

/** Bytes a directory's records take, given that no record may cross a sector boundary. */
function dirBytes(recs: Rec[]): number {
  let off = 0;
  for (const r of recs) {
    const len = recLength(r);
    if ((off % SECTOR) + len > SECTOR) off = Math.ceil(off / SECTOR) * SECTOR;
    off += len;
  }
  return sectorsFor(off) * SECTOR;
}

interface Extent {
  sector: number;
  size: number;
}

function writeRecord(buf: Buffer, off: number, r: Rec, ext: Extent, date: Date): number {
  const len = recLength(r);
  buf[off] = len;
  buf[off + 1] = 0;
  both32(buf, off + 2, ext.sector);
  both32(buf, off + 10, ext.size);
  recordDate(buf, off + 18, date);
  buf[off + 25] = r.isDir ? 2 : 0;
  both16(buf, off + 28, 1);
  buf[off + 32] = r.id.length;
  r.id.copy(buf, off + 33);
  r.su.copy(buf, off + 33 + r.id.length + (r.id.length % 2 === 0 ? 1 : 0));
  return len;
}

function writeDir(
  buf: Buffer,
  start: number,
  recs: Rec[],
  extentOf: (n: DirNode | FileNode) => Extent,
  date: Date,
) {
  let off = 0;
  for (const r of recs) {
    const len = recLength(r);
    if ((off % SECTOR) + len > SECTOR) off = Math.ceil(off / SECTOR) * SECTOR;
    off += writeRecord(buf, start * SECTOR + off, r, extentOf(r.target), date);
  }
}

function pathTable(
  dirs: DirNode[],
  idOf: (d: DirNode) => Buffer,
  sectorOf: (d: DirNode) => number,
  bigEndian: boolean,
) {
  const parts: Buffer[] = [];
  for (const d of dirs) {
    const id = d.parent ? idOf(d) : Buffer.from([0]);
    const e = Buffer.alloc(8 + id.length + (id.length % 2));
    e[0] = id.length;
    const parentNo = d.parent ? dirs.indexOf(d.parent) + 1 : 1;
    if (bigEndian) {
      e.writeUInt32BE(sectorOf(d), 2);
      e.writeUInt16BE(parentNo, 6);
    } else {
      e.writeUInt32LE(sectorOf(d), 2);
      e.writeUInt16LE(parentNo, 6);
    }
    id.copy(e, 8);
    parts.push(e);
  }
  return Buffer.concat(parts);
}

interface VdParams {
  joliet: boolean;
  volumeId: string;
  publisher: string;
  totalSectors: number;
  ptSize: number;
  ptL: number;
  ptM: number;
  root: Extent;
  date: Date;
}

function volumeDescriptor(p: VdParams): Buffer {
  const vd = Buffer.alloc(SECTOR);
  const text = p.joliet ? ucs2Field : asciiField;
  vd[0] = p.joliet ? 2 : 1;
  vd.write('CD001', 1, 'latin1');
  vd[6] = 1;
  text(vd, 8, 32, 'LINUX');
  text(vd, 40, 32, p.volumeId);
  both32(vd, 80, p.totalSectors);
  if (p.joliet) vd.write('%/E', 88, 'latin1'); // UCS-2 level 3
  both16(vd, 120, 1);
  both16(vd, 124, 1);
  both16(vd, 128, SECTOR);
  both32(vd, 132, p.ptSize);
  vd.writeUInt32LE(p.ptL, 140);
  vd.writeUInt32BE(p.ptM, 148);
  const root: Rec = { id: Buffer.from([0]), target: undefined as never, isDir: true, su: Buffer.alloc(0) };
  writeRecord(vd, 156, root, p.root, p.date);
  text(vd, 190, 128, '');
  text(vd, 318, 128, p.publisher);
  text(vd, 446, 128, '');
  text(vd, 574, 128, 'TSBM');
  text(vd, 702, 37, '');
  text(vd, 739, 37, '');
  text(vd, 776, 37, '');
  volumeDate(vd, 813, p.date);
  volumeDate(vd, 830, p.date);
  volumeDate(vd, 847, undefined);
  volumeDate(vd, 864, p.date);
  vd[881] = 1;
  return vd;
}

export function buildIso(files: { path: string; data: Buffer }[], opts: IsoOptions): Buffer {
  if (!/^[\x20-\x7e]{1,16}$/.test(opts.volumeId)) {
    throw new TsbmError(
      'runtime',
      `ISO volume id "${opts.volumeId}" is not 1-16 printable ASCII characters`,
      {
        hint: 'config drives use the volume id config-2',
      },
    );
  }
  const date = opts.date ?? new Date();
  const root = buildTree(files as IsoFileInput[]);
  const er = erEntry();
  const layout = layoutOf(opts.efiBootImage !== undefined);

  const pDirs = dirsInPathTableOrder(root, (d) => Buffer.from(d.isoName, 'latin1'));
  const jDirs = dirsInPathTableOrder(root, (d) => ucs2be(d.name));
  const pRecs = new Map(pDirs.map((d) => [d, primaryRecords(d, layout.er, er.length)]));
  const jRecs = new Map(jDirs.map((d) => [d, jolietRecords(d)]));

  // Sizes first (record lengths do not depend on where extents land), then sector numbers.
  const pSector = new Map<DirNode, number>();
  const jSector = new Map<DirNode, number>();
  const pPtProbe = pathTable(
    pDirs,
    (d) => Buffer.from(d.isoName, 'latin1'),
    () => 0,
    false,
  );
  const jPtProbe = pathTable(
    jDirs,
    (d) => ucs2be(d.name),
    () => 0,
    false,
  );
  let next = layout.firstFree;
  const alloc = (bytes: number) => {
    const s = next;
    next += sectorsFor(bytes);
    return s;
  };
  const pPtL = alloc(pPtProbe.length);
  const pPtM = alloc(pPtProbe.length);
  const jPtL = alloc(jPtProbe.length);
  const jPtM = alloc(jPtProbe.length);
  for (const d of pDirs) pSector.set(d, alloc(dirBytes(pRecs.get(d)!)));
  for (const d of jDirs) jSector.set(d, alloc(dirBytes(jRecs.get(d)!)));
  const boot = opts.efiBootImage;
  const catalogSector = boot ? alloc(SECTOR) : 0;
  const bootSector = boot ? alloc(boot.length) : 0;
  const fileExt = new Map<FileNode, Extent>();
  const walk = (d: DirNode) => {
    for (const c of d.children.values()) {
      if (c.kind === 'dir') walk(c);
      else fileExt.set(c, { sector: c.data.length ? alloc(c.data.length) : 0, size: c.data.length });
    }
  };
  walk(root);
  const total = next;
  if (total * SECTOR > MAX_TOTAL) {
    throw new TsbmError('runtime', `ISO would be ${total * SECTOR} bytes, more than this writer supports`);
  }

  const buf = Buffer.alloc(total * SECTOR);
  const pExtent = (n: DirNode | FileNode): Extent =>
    n.kind === 'dir' ? { sector: pSector.get(n)!, size: dirBytes(pRecs.get(n)!) } : fileExt.get(n)!;
  const jExtent = (n: DirNode | FileNode): Extent =>
    n.kind === 'dir' ? { sector: jSector.get(n)!, size: dirBytes(jRecs.get(n)!) } : fileExt.get(n)!;

  const common = { volumeId: opts.volumeId, publisher: opts.publisher ?? '', totalSectors: total, date };
  volumeDescriptor({
    ...common,
    joliet: false,
    ptSize: pPtProbe.length,
    ptL: pPtL,
    ptM: pPtM,
    root: pExtent(root),
  }).copy(buf, 16 * SECTOR);
  volumeDescriptor({
    ...common,
    joliet: true,
    ptSize: jPtProbe.length,
    ptL: jPtL,
    ptM: jPtM,
    root: jExtent(root),
  }).copy(buf, layout.joliet * SECTOR);
  if (boot) {
    bootRecord(catalogSector).copy(buf, 17 * SECTOR);
    bootCatalog(bootSector, boot.length).copy(buf, catalogSector * SECTOR);
    boot.copy(buf, bootSector * SECTOR);
  }
  const term = layout.terminator * SECTOR;
  buf[term] = 255;
  buf.write('CD001', term + 1, 'latin1');
  buf[term + 6] = 1;
  er.copy(buf, layout.er * SECTOR);

  const pId = (d: DirNode) => Buffer.from(d.isoName, 'latin1');
  const jId = (d: DirNode) => ucs2be(d.name);
  pathTable(pDirs, pId, (d) => pSector.get(d)!, false).copy(buf, pPtL * SECTOR);
  pathTable(pDirs, pId, (d) => pSector.get(d)!, true).copy(buf, pPtM * SECTOR);
  pathTable(jDirs, jId, (d) => jSector.get(d)!, false).copy(buf, jPtL * SECTOR);
  pathTable(jDirs, jId, (d) => jSector.get(d)!, true).copy(buf, jPtM * SECTOR);
  for (const d of pDirs) writeDir(buf, pSector.get(d)!, pRecs.get(d)!, pExtent, date);
  for (const d of jDirs) writeDir(buf, jSector.get(d)!, jRecs.get(d)!, jExtent, date);
  for (const [f, ext] of fileExt) f.data.copy(buf, ext.sector * SECTOR);
  return buf;
}

/** True when the bytes start like an ISO 9660 image (primary volume descriptor at sector 16). */
export function isIso9660(data: Buffer): boolean {
  return data.length >= 17 * SECTOR && data.toString('latin1', 16 * SECTOR + 1, 16 * SECTOR + 6) === 'CD001';
}

/** The primary volume id of an ISO image (trailing spaces removed). */
export function isoVolumeId(data: Buffer): string {
  return data.toString('latin1', 16 * SECTOR + 40, 16 * SECTOR + 72).trimEnd();
}
