// A minimal ISO 9660 reader (Joliet names, else plain names): the files of a config drive given
// as an ISO (an anaconda deploy writes them into cloud-init's seed directory), and what the
// simulated lab reads from a deployed disk or an OEMDRV volume. Bounded: it reads at most a few
// directory levels and refuses absurd sizes.
export interface IsoFile {
  path: string;
  data: Buffer;
}

const BLOCK = 2048;
const MAX_FILE = 64 * 1024 * 1024;

export function readIsoFiles(iso: Buffer): IsoFile[] {
  const descriptor = findDescriptor(iso);
  if (!descriptor) return [];
  const { root, joliet } = descriptor;
  const out: IsoFile[] = [];
  const walk = (lba: number, len: number, prefix: string, depth: number) => {
    if (depth > 8) return;
    if (lba * BLOCK + len > iso.length) return;
    const dir = iso.subarray(lba * BLOCK, lba * BLOCK + len);
    let off = 0;
    while (off < dir.length) {
      const recLen = dir[off] ?? 0;
      if (recLen === 0) {
        off = (Math.floor(off / BLOCK) + 1) * BLOCK; // records never span blocks
        continue;
      }
      const rec = dir.subarray(off, off + recLen);
      off += recLen;
      const extent = rec.readUInt32LE(2);
      const size = rec.readUInt32LE(10);
      const flags = rec[25] ?? 0;
      const nameLen = rec[32] ?? 0;
      const rawName = rec.subarray(33, 33 + nameLen);
      if (nameLen === 1 && (rawName[0] === 0 || rawName[0] === 1)) continue; // . and ..
      let name = joliet ? rawName.swap16().toString('utf16le') : rawName.toString('latin1');
      name = name.replace(/;1$/, '').replace(/\.$/, '');
      if (joliet) rawName.swap16(); // restore the buffer we swapped in place
      const path = prefix ? `${prefix}/${name}` : name;
      if (flags & 2) walk(extent, size, path, depth + 1);
      // A file past the end of what was read (the head of a big ISO) is left out, not cut short.
      else if (size <= MAX_FILE && extent * BLOCK + size <= iso.length) out.push({ path, data: Buffer.from(iso.subarray(extent * BLOCK, extent * BLOCK + size)) });
    }
  };
  walk(root.lba, root.len, '', 0);
  return out;
}

export function isoVolumeId(iso: Buffer): string | undefined {
  const pvd = iso.subarray(16 * BLOCK, 17 * BLOCK);
  if (pvd[0] !== 1 || pvd.toString('latin1', 1, 6) !== 'CD001') return undefined;
  return pvd.toString('latin1', 40, 72).trim();
}

function findDescriptor(iso: Buffer): { root: { lba: number; len: number }; joliet: boolean } | undefined {
  let primary: { lba: number; len: number } | undefined;
  for (let i = 16; i < 32 && (i + 1) * BLOCK <= iso.length; i++) {
    const d = iso.subarray(i * BLOCK, (i + 1) * BLOCK);
    if (d.toString('latin1', 1, 6) !== 'CD001') break;
    const type = d[0];
    const rootRec = d.subarray(156, 156 + 34);
    const root = { lba: rootRec.readUInt32LE(2), len: rootRec.readUInt32LE(10) };
    if (type === 2 && d.toString('latin1', 88, 90) === '%/') return { root, joliet: true };
    if (type === 1) primary = root;
    if (type === 255) break;
  }
  return primary ? { root: primary, joliet: false } : undefined;
}
