// Hand-built image headers for the inspector's tests: each format's first bytes as its spec lays
// them out, with the knobs a hostile image turns (backing files, data files, feature bits, sizes).
const HEAD = 64 * 1024;

export interface Qcow2Options {
  version?: number;
  virtualSize?: bigint;
  clusterBits?: number;
  /** A backing file name, stored after the header (offset and length in the header). */
  backing?: string;
  /** Incompatible feature bits (v3). */
  incompatible?: bigint;
  /** Header extensions after the header: [type, data]. */
  extensions?: Array<[number, string]>;
  /** Leave out the end-of-extensions marker, and fill the rest with this byte. */
  noEnd?: number;
  headerLength?: number;
  encrypted?: boolean;
}

export function qcow2Header(o: Qcow2Options = {}): Buffer {
  const b = Buffer.alloc(HEAD);
  const version = o.version ?? 3;
  b.write('QFI\xfb', 0, 'latin1');
  b.writeUInt32BE(version, 4);
  b.writeUInt32BE(o.clusterBits ?? 16, 20);
  b.writeBigUInt64BE(o.virtualSize ?? 1n << 30n, 24);
  if (o.encrypted) b.writeUInt32BE(1, 32);
  const headerLength = o.headerLength ?? (version === 3 ? 112 : 72);
  if (version === 3) {
    b.writeBigUInt64BE(o.incompatible ?? 0n, 72);
    b.writeUInt32BE(4, 96);
    b.writeUInt32BE(headerLength, 100);
  }
  let off = headerLength;
  for (const [type, data] of o.extensions ?? []) {
    b.writeUInt32BE(type, off);
    b.writeUInt32BE(data.length, off + 4);
    b.write(data, off + 8, 'latin1');
    off += 8 + Math.ceil(data.length / 8) * 8;
  }
  if (o.noEnd !== undefined) b.fill(o.noEnd, off);
  else off += 8; // type 0, length 0: the end
  if (o.backing !== undefined) {
    const at = Math.max(off, 512);
    b.write(o.backing, at, 'latin1');
    b.writeBigUInt64BE(BigInt(at), 8);
    b.writeUInt32BE(o.backing.length, 16);
  }
  return b;
}

export const EXT_DATA_FILE = 0x44415441;
export const EXT_BACKING_FORMAT = 0xe2792aca;

/** A protective MBR and a GPT header at LBA 1 (512-byte sectors). */
export function gptHeader(): Buffer {
  const b = mbrHeader(0xee);
  b.write('EFI PART', 512, 'latin1');
  return b;
}

/** An MBR with one partition of `type`. */
export function mbrHeader(type = 0x83): Buffer {
  const b = Buffer.alloc(HEAD);
  b[446] = 0x80;
  b[446 + 4] = type;
  b[510] = 0x55;
  b[511] = 0xaa;
  return b;
}

/** ISO 9660: the primary volume descriptor at sector 16; `hybrid` adds an MBR as isohybrid does. */
export function isoHeader(hybrid = false): Buffer {
  const b = hybrid ? mbrHeader(0x17) : Buffer.alloc(HEAD);
  b[0x8000] = 1;
  b.write('CD001', 0x8001, 'latin1');
  return b;
}

export function vmdkSparseHeader(sectors = 2097152n): Buffer {
  const b = Buffer.alloc(HEAD);
  b.write('KDMV', 0, 'latin1');
  b.writeUInt32LE(1, 4);
  b.writeBigUInt64LE(sectors, 12);
  return b;
}

export function vmdkDescriptor(): Buffer {
  const b = Buffer.alloc(HEAD);
  b.write('# Disk DescriptorFile\nversion=1\ncreateType="monolithicFlat"\nRW 2048 FLAT "/etc/shadow" 0\n', 0, 'latin1');
  return b;
}

export function vhdHeader(size = 1n << 30n): Buffer {
  const b = Buffer.alloc(HEAD);
  b.write('conectix', 0, 'latin1');
  b.writeBigUInt64BE(size, 48);
  return b;
}

export function magicHeader(magic: string, at = 0): Buffer {
  const b = Buffer.alloc(HEAD);
  b.write(magic, at, 'latin1');
  return b;
}

export function vdiHeader(size = 1n << 30n): Buffer {
  const b = Buffer.alloc(HEAD);
  b.write('<<< Oracle VM VirtualBox Disk Image >>>\n', 0, 'latin1');
  b.writeUInt32LE(0xbeda107f, 0x40);
  b.writeBigUInt64LE(size, 0x170);
  return b;
}
