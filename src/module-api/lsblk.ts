// Parses `lsblk -J -b -O` output into Disks. lsblk's JSON changed across util-linux versions:
// sizes are numbers (>= 2.33 with -b) or strings, booleans are true/false or "0"/"1", and
// vendor/model come padded with spaces from SCSI inquiry data.
import type { Disk } from './disk.js';

type Raw = Record<string, unknown>;

function str(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  const s = String(v).trim();
  return s === '' ? undefined : s;
}

function bool(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  const s = str(v)?.toLowerCase();
  return s === '1' || s === 'true' || s === 'yes';
}

function num(v: unknown): number {
  if (typeof v === 'number') return v;
  const n = Number(str(v) ?? 'NaN');
  return Number.isFinite(n) ? n : 0;
}

export function parseLsblk(json: string): Disk[] {
  let doc: unknown;
  try {
    doc = JSON.parse(json);
  } catch (e) {
    throw new Error(`lsblk printed something that is not JSON: ${(e as Error).message}`);
  }
  const devs = (doc as { blockdevices?: unknown }).blockdevices;
  if (!Array.isArray(devs)) throw new Error('lsblk JSON has no "blockdevices" list');
  return devs.filter((d): d is Raw => !!d && typeof d === 'object').map(toDisk);
}

function toDisk(r: Raw): Disk {
  const kname = str(r.kname) ?? str(r.name) ?? '?';
  const rawName = str(r.path) ?? str(r.name) ?? kname;
  const name = rawName.startsWith('/') ? rawName : `/dev/${rawName}`;
  const wwn = str(r.wwn);
  const disk: Disk = {
    name,
    kname: kname.replace(/^\/dev\//, ''),
    type: str(r.type) ?? 'disk',
    sizeBytes: num(r.size),
    rotational: bool(r.rota),
    readOnly: bool(r.ro),
    removable: bool(r.rm),
  };
  const opt = {
    model: str(r.model),
    vendor: str(r.vendor),
    serial: str(r.serial),
    wwn,
    // lsblk reports the full WWN (with any vendor extension) in one field.
    wwnWithExtension: wwn,
    hctl: str(r.hctl),
    tran: str(r.tran),
  };
  for (const [k, v] of Object.entries(opt)) if (v !== undefined) (disk as unknown as Raw)[k] = v;
  return disk;
}

/** Device kinds never chosen unless a `name` hint asks for them explicitly (Ironic skips the same). */
const SKIPPED_TYPES = new Set(['loop', 'rom']);
const SKIPPED_PREFIXES = ['loop', 'sr', 'fd', 'mem', 'zram', 'ram'];

export function isCandidate(d: Disk): boolean {
  if (d.type !== 'disk' && d.type !== 'mpath') return false;
  if (SKIPPED_TYPES.has(d.type)) return false;
  if (SKIPPED_PREFIXES.some((p) => d.kname.startsWith(p))) return false;
  if (d.readOnly) return false;
  return true;
}
