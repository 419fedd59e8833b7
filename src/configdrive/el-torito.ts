// El Torito, the part of an ISO 9660 image that makes it bootable: a Boot Record volume
// descriptor (sector 17) pointing at a boot catalog, whose entries point at boot images. tsbm
// writes one UEFI entry (platform 0xEF, no emulation) whose image is a FAT file system holding
// the EFI loader; the firmware mounts that image, never the ISO 9660 tree. Also a reader, for
// tests and for the simulated lab, which boots what the catalog points at as a firmware would.
const EL_TORITO_ID = 'EL TORITO SPECIFICATION';
export const PLATFORM_EFI = 0xef;
const SECTOR = 2048;

/** The Boot Record volume descriptor: type 0, "CD001", the El Torito id, the catalog's sector. */
export function bootRecord(catalogSector: number): Buffer {
  const vd = Buffer.alloc(SECTOR);
  vd[0] = 0;
  vd.write('CD001', 1, 'latin1');
  vd[6] = 1;
  vd.write(EL_TORITO_ID, 7, 'latin1');
  vd.writeUInt32LE(catalogSector, 0x47);
  return vd;
}

/**
 * The catalog: a validation entry (platform EFI, checksummed) and a bootable no-emulation
 * default entry. The entry's count is in 512-byte sectors and 16 bits wide (32 MiB). A larger
 * image gets a count of 0, which EDK2-based firmware (OVMF, AMI, most server firmware) reads as
 * "to the end of the volume": the FAT driver then goes by the image's own boot sector. tsbm's
 * images (GRUB, or a distribution's efiboot.img, and a grub.cfg) are far smaller.
 */
export function bootCatalog(imageSector: number, imageBytes: number): Buffer {
  const cat = Buffer.alloc(SECTOR);
  cat[0] = 1; // validation entry
  cat[1] = PLATFORM_EFI;
  cat.write('TSBM', 4, 'latin1');
  cat[30] = 0x55;
  cat[31] = 0xaa;
  let sum = 0;
  for (let i = 0; i < 32; i += 2) sum = (sum + cat.readUInt16LE(i)) & 0xffff;
  cat.writeUInt16LE((0x10000 - sum) & 0xffff, 28);
  const e = cat.subarray(32, 64);
  e[0] = 0x88; // bootable
  e[1] = 0; // no emulation
  const count = Math.ceil(imageBytes / 512);
  e.writeUInt16LE(count <= 0xffff ? count : 0, 6);
  e.writeUInt32LE(imageSector, 8);
  return cat;
}

export interface BootEntry {
  platform: number;
  bootable: boolean;
  /** 0: no emulation. */
  media: number;
  sector: number;
  /** In 512-byte sectors, as written. */
  count: number;
}

/** The catalog's sector from the Boot Record descriptor, if the image has one. */
export function bootCatalogSector(iso: Buffer): number | undefined {
  for (let i = 16; i < 32 && (i + 1) * SECTOR <= iso.length; i++) {
    const d = iso.subarray(i * SECTOR, (i + 1) * SECTOR);
    if (d.toString('latin1', 1, 6) !== 'CD001') return undefined;
    if (d[0] === 255) return undefined;
    if (d[0] === 0 && d.toString('latin1', 7, 7 + EL_TORITO_ID.length) === EL_TORITO_ID) return d.readUInt32LE(0x47);
  }
  return undefined;
}

/** The bootable entries of the catalog (default entry and any section entries). */
export function readBootCatalog(iso: Buffer): BootEntry[] {
  const at = bootCatalogSector(iso);
  if (at === undefined || (at + 1) * SECTOR > iso.length) return [];
  const cat = iso.subarray(at * SECTOR, (at + 1) * SECTOR);
  let sum = 0;
  for (let i = 0; i < 32; i += 2) sum = (sum + cat.readUInt16LE(i)) & 0xffff;
  if (cat[0] !== 1 || cat[30] !== 0x55 || cat[31] !== 0xaa || sum !== 0) return [];
  const out: BootEntry[] = [];
  let platform = cat[1] ?? 0;
  for (let off = 32; off + 32 <= SECTOR; off += 32) {
    const e = cat.subarray(off, off + 32);
    if (e[0] === 0x90 || e[0] === 0x91) {
      platform = e[1] ?? 0;
      continue;
    }
    if (e[0] !== 0x88 && e[0] !== 0x00) continue;
    if (e.readUInt32LE(8) === 0) continue;
    out.push({ platform, bootable: e[0] === 0x88, media: e[1] ?? 0, sector: e.readUInt32LE(8), count: e.readUInt16LE(6) });
  }
  return out;
}

/** The bytes of a UEFI boot entry's image: its count, or up to the end of the ISO for a count below 2. */
export function efiBootImage(iso: Buffer): Buffer | undefined {
  const entry = readBootCatalog(iso).find((e) => e.bootable && e.platform === PLATFORM_EFI && e.media === 0);
  if (!entry) return undefined;
  const start = entry.sector * SECTOR;
  const end = entry.count >= 2 ? start + entry.count * 512 : iso.length;
  return start < iso.length ? iso.subarray(start, Math.min(end, iso.length)) : undefined;
}
