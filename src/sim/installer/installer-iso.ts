// The simulated lab's installer ISO: a real ISO 9660 image (tsbm's writer) laid out like a
// distribution's boot.iso, with the `.treeinfo` Anaconda trees carry and an EFI grub.cfg. A
// simulated node that boots an ISO with a `.treeinfo` naming a stage2 image runs the simulated
// installer. `ksUrl` bakes inst.ks= into the boot configuration, as sites do for BMCs with a
// single virtual media slot.
import { buildIso } from '../../configdrive/iso9660.js';

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
