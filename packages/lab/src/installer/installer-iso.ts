// The simulated lab's installer ISO: a real ISO 9660 image (tsbm's writer) laid out like a
// distribution's boot.iso, with the `.treeinfo` Anaconda trees carry and an EFI grub.cfg. A
// simulated node that boots an ISO with a `.treeinfo` naming a stage2 image runs the simulated
// installer. `ksUrl` bakes inst.ks= into the boot configuration, as sites do for BMCs with a
// single virtual media slot.
import { buildFat } from 'tsbm/lib/configdrive/fat.js';
import { buildIso } from 'tsbm/lib/configdrive/iso9660.js';

const INSTALLER_VOLUME_ID = 'TSBM-SIM-INST';
const DATE = new Date('2000-01-01T00:00:00Z');

const TREEINFO = `[general]
name = TSBM simulated installer
family = TSBM
version = 1
arch = x86_64
platforms = x86_64

[stage2]
mainimage = images/install.img

[images-x86_64]
kernel = images/pxeboot/vmlinuz
initrd = images/pxeboot/initrd.img
`;

export function buildInstallerIso(opts: { ksUrl?: string } = {}): Buffer {
  const args = [`inst.stage2=hd:LABEL=${INSTALLER_VOLUME_ID}`, ...(opts.ksUrl ? [`inst.ks=${opts.ksUrl}`] : []), 'quiet'].join(' ');
  const grub = `set timeout=1\nmenuentry 'Install (tsbm simulated)' {\n  linux /images/pxeboot/vmlinuz ${args}\n  initrd /images/pxeboot/initrd.img\n}\n`;
  return buildIso(
    [
      { path: '.treeinfo', data: Buffer.from(TREEINFO) },
      { path: 'EFI/BOOT/grub.cfg', data: Buffer.from(grub) },
      { path: 'images/pxeboot/vmlinuz', data: Buffer.from('simulated kernel\n') },
      { path: 'images/pxeboot/initrd.img', data: Buffer.from('simulated initrd\n') },
      { path: 'images/install.img', data: Buffer.from('simulated stage2\n') },
    ],
    { volumeId: INSTALLER_VOLUME_ID, date: DATE, publisher: 'tsbm' },
  );
}

/**
 * The same installer served as files (Ironic's instance_info kernel, ramdisk, stage2), and an
 * ESP image for driver_info.bootloader as a distribution's images/efiboot.img is one: FAT with
 * EFI/BOOT/BOOTX64.EFI (an EFI binary's header; the lab's nodes only check that much). The lab
 * needs no GRUB on the controller this way.
 */
export const SIM_INSTALLER_FILES: Readonly<Record<'kernel' | 'ramdisk' | 'stage2' | 'bootloader', string>> = {
  kernel: '/tsbm-sim-installer/images/pxeboot/vmlinuz',
  ramdisk: '/tsbm-sim-installer/images/pxeboot/initrd.img',
  stage2: '/tsbm-sim-installer/images/install.img',
  bootloader: '/tsbm-sim-installer/images/efiboot.img',
};

export function simInstallerFile(path: string): Buffer | undefined {
  switch (path) {
    case SIM_INSTALLER_FILES.kernel:
      return Buffer.from('simulated kernel\n');
    case SIM_INSTALLER_FILES.ramdisk:
      return Buffer.from('simulated initrd\n');
    case SIM_INSTALLER_FILES.stage2:
      return Buffer.from('simulated stage2\n');
    case SIM_INSTALLER_FILES.bootloader:
      return buildFat(
        [
          { path: 'EFI/BOOT/BOOTX64.EFI', data: Buffer.concat([Buffer.from('MZ'), Buffer.from('simulated shim\n')]) },
          { path: 'EFI/BOOT/grubx64.efi', data: Buffer.concat([Buffer.from('MZ'), Buffer.from('simulated grub\n')]) },
        ],
        { label: 'ANACONDA' },
      );
    default:
      return undefined;
  }
}
