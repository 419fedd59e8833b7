// The boot ISO tsbm builds for an installer served as files: the kernel and ramdisk in the ISO
// 9660 tree where distributions put them (images/pxeboot/), the grub.cfg at EFI/BOOT/grub.cfg,
// and an El Torito UEFI entry whose FAT image holds the EFI loader and the same grub.cfg. As
// Ironic builds its virtual-media boot ISOs from a kernel and ramdisk, with tsbm's own writers.
import { buildFat } from '../../configdrive/fat.js';
import { buildIso } from '../../configdrive/iso9660.js';
import type { EspFile } from './efi-loader.js';
import { GRUB_CFG_PATH, INITRD_PATH, INSTALLER_BOOT_LABEL, KERNEL_PATH } from './installer-boot.js';

/** Fixed, so the same inputs give the same bytes. */
const DATE = new Date('2000-01-01T00:00:00Z');

export interface InstallerBootIsoInput {
  kernel: Buffer;
  initrd: Buffer;
  /** The EFI loader's files (EFI/BOOT/BOOTX64.EFI and what it needs). */
  esp: EspFile[];
  grubCfg: string;
}

export function buildInstallerBootIso(i: InstallerBootIsoInput): Buffer {
  const cfg = Buffer.from(i.grubCfg, 'utf8');
  // The configuration first in the FAT image: small files at the front.
  const esp = buildFat([{ path: GRUB_CFG_PATH, data: cfg }, ...i.esp], { label: 'TSBM-ESP' });
  return buildIso(
    [
      { path: GRUB_CFG_PATH, data: cfg },
      { path: KERNEL_PATH, data: i.kernel },
      { path: INITRD_PATH, data: i.initrd },
    ],
    { volumeId: INSTALLER_BOOT_LABEL, date: DATE, publisher: 'tsbm', efiBootImage: esp },
  );
}
