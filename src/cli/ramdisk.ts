// `tsbm ramdisk build`: the deploy ramdisk ISO from Debian's packages (docs/ramdisk.md). The
// work happens in ramdisk-command.ts, imported only when the command runs.
import { type Command, Option } from 'commander';
import type { RamdiskBuildFlags } from './ramdisk-command.js';

const HELP = `
Builds a UEFI-bootable ISO with what docs/ramdisk.md asks for: Debian's generic kernel with its
driver modules and NIC firmware, util-linux, fdisk, gdisk, iproute2, curl, qemu-img, OpenSSH,
and podman in the bootc profile (the image profile is smaller, for deploy-image.yml and
undeploy.yml). Needs root, debootstrap, cpio, zstd and grub-efi-amd64-bin on the controller,
and the Debian archive (--mirror). A build takes minutes; the manifest beside the ISO records
every package's version, and a second build with the same recipe and archive state is a cache
hit. No key is baked in: each node gets the controller's key, the callback URL and token and
optional static network on its own small volume at deploy time.

Examples:
  sudo tsbm ramdisk build                               .tsbm/ramdisk/tsbm-ramdisk-bootc.iso
  sudo tsbm ramdisk build --profile image --out /srv/tsbm
  sudo tsbm ramdisk build --mirror http://apt.example.com/debian --append "ipv6.disable=1"`;

export function register(program: Command): void {
  const ramdisk = program.command('ramdisk').description('the deploy ramdisk tsbm works through on a node');
  ramdisk
    .command('build')
    .description('build the deploy ramdisk ISO from Debian packages (root; minutes; cached by its manifest)')
    .addOption(new Option('--profile <profile>', 'bootc: with podman, for every deploy; image: without podman, for image deploys and undeploy').choices(['image', 'bootc']).default('bootc'))
    .option('--out <dir>', 'where the ISO and its manifest go', '.tsbm/ramdisk')
    .option('--suite <suite>', 'Debian suite', 'bookworm')
    .option('--mirror <url>', 'Debian archive', 'http://deb.debian.org/debian')
    .option('--append <args>', 'more kernel arguments', '')
    .option('--force', 'build even when the ISO there matches the recipe and the archive')
    .option('--json', 'progress and the result as JSON lines on stdout')
    .addHelpText('after', HELP)
    .action(async (flags: RamdiskBuildFlags) => {
      const { ramdiskBuild } = await import('./ramdisk-command.js');
      await ramdiskBuild(flags);
    });
}
