// The EFI loader of a boot ISO tsbm builds, from one of two places, both named up front:
// - the operator's (driver_info.bootloader, Ironic's name): an ESP image (FAT12/16, as a
//   distribution's images/efiboot.img is, with its signed shim and GRUB, so Secure Boot works)
//   or a bare EFI binary; tsbm adds its grub.cfg to the image's files;
// - the controller's GRUB: `grub-mkstandalone` (Debian/Ubuntu grub-efi-amd64-bin, Fedora/RHEL
//   grub2-tools-extra + grub2-efi-x64-modules), one unsigned BOOTX64.EFI with its modules inside
//   and a fixed configuration that finds the ISO by its label and reads EFI/BOOT/grub.cfg there.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isFat, readFatFiles } from '../../configdrive/fat-read.js';
import { findProgram } from '../../util/find-program.js';
import { GRUB_CFG_PATH, INSTALLER_BOOT_LABEL, InstallerBootError } from './installer-boot.js';

export const EFI_LOADER_PATH = 'EFI/BOOT/BOOTX64.EFI';
const GRUB_EFI_DIRS = ['/usr/lib/grub/x86_64-efi', '/usr/lib/grub2/x86_64-efi'];
const GRUB_TOOLS = ['grub-mkstandalone', 'grub2-mkstandalone'];

export interface EspFile {
  path: string;
  data: Buffer;
}

/** grub-mkstandalone and its x86_64-efi modules, or what to tell the operator when they are missing. */
export function controllerGrub(): { tool: string; dir: string } | { missing: string } {
  const tool = GRUB_TOOLS.map((t) => findProgram(t)).find((t) => t !== undefined);
  const dir = GRUB_EFI_DIRS.find((d) => existsSync(join(d, 'linux.mod')));
  if (tool && dir) return { tool, dir };
  return {
    missing: `${tool ? 'GRUB for UEFI (x86_64-efi modules)' : 'grub-mkstandalone'} is not on the controller; tsbm needs an EFI loader to boot instance_info.kernel and ramdisk from virtual media`,
  };
}

export const GRUB_MISSING_HINT =
  'install it (Debian/Ubuntu: apt-get install grub-efi-amd64-bin; Fedora/RHEL: dnf install grub2-tools-extra grub2-efi-x64-modules), or set driver_info.bootloader to an ESP image with EFI/BOOT/BOOTX64.EFI (the distribution\'s images/efiboot.img: its signed shim and GRUB also boot with Secure Boot on)';

// tsbm's GRUB starts from its memdisk: find the ISO by its label, then read the same grub.cfg
// an operator's ESP GRUB reads. $prefix stays on the memdisk, where the modules are.
const embeddedCfg = (label: string) => `search --no-floppy --set=root --label ${label}
configfile ($root)/${GRUB_CFG_PATH}
echo "tsbm: no ${GRUB_CFG_PATH} on a volume labelled ${label}"
sleep 30
`;

/**
 * A standalone GRUB EFI binary built on the controller (a second or two) that boots the ISO
 * labelled `label` (the installer boot ISO's by default; `tsbm ramdisk build` gives its own).
 */
export async function buildStandaloneGrub(signal?: AbortSignal, label = INSTALLER_BOOT_LABEL): Promise<Buffer> {
  const grub = controllerGrub();
  if ('missing' in grub) throw new InstallerBootError(grub.missing, GRUB_MISSING_HINT);
  const dir = await mkdtemp(join(process.env.TMPDIR ?? '/tmp', 'tsbm-grub-'));
  try {
    const cfg = join(dir, 'grub.cfg');
    const out = join(dir, 'BOOTX64.EFI');
    await writeFile(cfg, embeddedCfg(label));
    const argv = [
      '-O',
      'x86_64-efi',
      '-d',
      grub.dir,
      '-o',
      out,
      '--locales=',
      '--themes=',
      '--fonts=',
      // Only what the boot needs: a smaller image, read faster over virtual media.
      '--install-modules=linux normal configfile search search_label search_fs_file iso9660 fat part_gpt part_msdos echo test sleep all_video efi_gop efi_uga gzio',
      '--modules=part_gpt part_msdos iso9660 fat search search_label',
      `boot/grub/grub.cfg=${cfg}`,
    ];
    await new Promise<void>((ok, fail) => {
      execFile(grub.tool, argv, { maxBuffer: 1024 * 1024, ...(signal ? { signal } : {}) }, (err, _stdout, stderr) => {
        if (err) fail(new InstallerBootError(`${grub.tool} failed: ${String(stderr).trim() || err.message}`, GRUB_MISSING_HINT));
        else ok();
      });
    });
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The files of the operator's bootloader (driver_info.bootloader): an ESP image's files, or one EFI binary. */
export function operatorEspFiles(data: Buffer, shown: string): EspFile[] {
  if (data.length >= 2 && data.toString('latin1', 0, 2) === 'MZ') return [{ path: EFI_LOADER_PATH, data }];
  if (!isFat(data)) {
    throw new InstallerBootError(`driver_info.bootloader ${shown} is neither a FAT12/16 ESP image nor an EFI binary`, "give the distribution's images/efiboot.img (an ESP image with EFI/BOOT/BOOTX64.EFI), or an EFI binary");
  }
  const files = readFatFiles(data);
  if (!files.some((f) => f.path.toLowerCase() === EFI_LOADER_PATH.toLowerCase())) {
    throw new InstallerBootError(`driver_info.bootloader ${shown} has no ${EFI_LOADER_PATH} (it has ${files.map((f) => f.path).slice(0, 8).join(', ') || 'no files'})`, 'give an ESP image whose EFI/BOOT/BOOTX64.EFI is the loader firmware starts');
  }
  // tsbm writes its own grub.cfg; the image's is dropped.
  return files.filter((f) => f.path.toLowerCase() !== GRUB_CFG_PATH.toLowerCase());
}
