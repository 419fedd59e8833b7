// What the lab's QEMU machines boot in e2e tests, built from this machine's own files:
// - a test ramdisk ISO (UEFI: GRUB from grub-mkstandalone in an El Torito FAT image, this
//   machine's /boot kernel, an initramfs with busybox, dropbear and the programs
//   docs/ramdisk.md lists for image deploys and undeploy, copied with the libraries ldd names).
//   Its dropbear host key is made here, so the test pins it in known_hosts;
// - a UEFI-bootable whole-disk image (GPT, one ESP holding a standalone GRUB, the kernel and a
//   tiny initramfs) whose init mounts the config drive and prints its meta_data.json on the
//   serial console between markers, then powers the machine off.
// Stand-ins for `tsbm ramdisk build` and a real OS image: they live under test/.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildFat } from '../../../src/configdrive/fat.js';
import { INSTALLER_BOOT_LABEL, INITRD_PATH, KERNEL_PATH } from '../../../src/modules/anaconda/installer-boot.js';
import { buildInstallerBootIso } from '../../../src/modules/anaconda/installer-boot-iso.js';
import { buildStandaloneGrub } from '../../../src/modules/anaconda/efi-loader.js';
import { programsInitramfs } from './initramfs.js';
import { haveTool, sh } from './run.js';

export const KERNEL = existsSync('/boot')
  ? readdirSync('/boot')
      .filter((f) => /^vmlinuz-/.test(f))
      .sort()
      .map((f) => join('/boot', f))
      .at(-1)
  : undefined;
const KVER = KERNEL?.replace(/^.*vmlinuz-/, '');
export const BUSYBOX = ['/usr/bin/busybox', '/bin/busybox'].find(existsSync);

/** Programs of this machine the ramdisk carries (image deploy, config drive, undeploy's erase). */
const RAMDISK_PROGRAMS = [
  ...['dd', 'cat', 'mkdir', 'rm', 'tee', 'mkfifo', 'cut', 'sha256sum', 'sha512sum', 'md5sum', 'sync', 'chmod', 'mv', 'wc', 'stat', 'id', 'dirname', 'rmdir', 'ls', 'uname'].map((p) => `/usr/bin/${p}`),
  '/usr/bin/lsblk', '/usr/bin/curl', '/usr/bin/find', '/usr/bin/partx', '/usr/bin/cmp', '/usr/bin/ip',
  '/usr/sbin/blockdev', '/usr/sbin/sfdisk', '/usr/sbin/sgdisk', '/usr/sbin/wipefs', '/usr/sbin/dropbear',
];

/** What is missing on this machine to build both images (empty: all there). */
export function vmImageTools(): string[] {
  return [
    !KERNEL && 'a kernel at /boot/vmlinuz-* (linux-image-cloud-amd64)',
    !BUSYBOX && 'busybox',
    !haveTool('grub-mkstandalone') && 'grub-mkstandalone (grub-efi-amd64-bin)',
    !haveTool('dropbearkey') && 'dropbear (dropbear-bin)',
    !haveTool('sgdisk') && 'sgdisk (gdisk)',
    ...RAMDISK_PROGRAMS.filter((p) => !existsSync(p)),
  ].filter((m): m is string => typeof m === 'string');
}

/** Module files (in load order) for the named modules, dependencies first. */
function moduleFiles(names: string[]): string[] {
  const out: string[] = [];
  for (const n of names) {
    const deps = sh(['modprobe', '--show-depends', '-S', KVER!, n]).stdout;
    for (const m of deps.matchAll(/^insmod (\S+)/gm)) if (!out.includes(m[1]!)) out.push(m[1]!);
  }
  return out;
}

const MODULES = ['virtio_pci', 'virtio_blk', 'virtio_net', 'isofs'];

function modulesInit(files: string[]): string {
  return files.map((f) => `insmod ${f} 2>/dev/null`).join('\n');
}

const EARLY = `/bin/busybox mount -t proc proc /proc
/bin/busybox --install -s /bin
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
`;

export interface TestRamdisk {
  iso: string;
  /** known_hosts key part: "ssh-ed25519 AAAA..." */
  hostKeyPub: string;
}

/** The test ramdisk ISO: dropbear on port 22 accepting `authorizedKey` as root, at 10.0.2.15 (QEMU user networking). */
export async function buildTestRamdisk(dir: string, authorizedKey: string): Promise<TestRamdisk> {
  const key = join(dir, 'ramdisk_host_ed25519');
  sh(['dropbearkey', '-t', 'ed25519', '-f', key]);
  const hostKeyPub = sh(['dropbearkey', '-y', '-f', key]).stdout.split('\n').find((l) => l.startsWith('ssh-ed25519'))!.split(' ').slice(0, 2).join(' ');
  const mods = moduleFiles(MODULES);
  const init = `${EARLY}${modulesInit(mods)}
sleep 1
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
echo "TSBM-TEST-RAMDISK up: $(cat /sys/class/dmi/id/product_uuid)"
/usr/sbin/dropbear -F -E -s -p 22 -r /etc/dropbear/host_key &
while :; do sleep 3600; done
`;
  const initrd = programsInitramfs({
    busybox: BUSYBOX!,
    programs: [...RAMDISK_PROGRAMS, ...mods],
    files: [
      { name: 'etc/passwd', mode: 0o100644, data: Buffer.from('root:x:0:0:root:/root:/bin/sh\n') },
      { name: 'etc/group', mode: 0o100644, data: Buffer.from('root:x:0:\n') },
      { name: 'etc/shells', mode: 0o100644, data: Buffer.from('/bin/sh\n') },
      { name: 'etc/dropbear', mode: 0o040700 },
      { name: 'etc/dropbear/host_key', mode: 0o100600, data: readFileSync(key) },
      { name: 'root', mode: 0o040700 },
      { name: 'root/.ssh', mode: 0o040700 },
      { name: 'root/.ssh/authorized_keys', mode: 0o100600, data: Buffer.from(`${authorizedKey.trim()}\n`) },
    ],
    init,
  });
  const grubCfg = [
    'set timeout=0',
    `search --no-floppy --set=root --label ${INSTALLER_BOOT_LABEL}`,
    "menuentry 'tsbm test ramdisk' {",
    `  linux /${KERNEL_PATH} console=ttyS0,115200 panic=-1 quiet`,
    `  initrd /${INITRD_PATH}`,
    '}',
    '',
  ].join('\n');
  const iso = join(dir, 'test-ramdisk.iso');
  writeFileSync(iso, buildInstallerBootIso({ kernel: readFileSync(KERNEL!), initrd, esp: [{ path: 'EFI/BOOT/BOOTX64.EFI', data: await buildStandaloneGrub() }], grubCfg }));
  return { iso, hostKeyPub };
}

export const META_BEGIN = 'TSBM-INSTANCE-META-BEGIN';
export const META_END = 'TSBM-INSTANCE-META-END';

/** The instance's report on a console: meta_data.json as the instance read it from its config drive. */
export function instanceReport(console: string): Record<string, unknown> | undefined {
  const m = new RegExp(`${META_BEGIN} (\\S+) ${META_END}`).exec(console);
  return m ? (JSON.parse(Buffer.from(m[1]!, 'base64').toString('utf8')) as Record<string, unknown>) : undefined;
}

/** GRUB for the disk image: its config is on the ESP it finds by a marker file. */
function diskGrub(dir: string): Buffer {
  const cfg = join(dir, 'disk-grub.cfg');
  writeFileSync(
    cfg,
    ['search --no-floppy --set=root --file /tsbm-test-instance', 'set timeout=0', 'linux ($root)/vmlinuz console=ttyS0,115200 panic=-1 quiet', 'initrd ($root)/initrd.img', 'boot', ''].join('\n'),
  );
  const out = join(dir, 'disk-BOOTX64.EFI');
  sh([
    'grub-mkstandalone', '-O', 'x86_64-efi', '-o', out, '--locales=', '--themes=', '--fonts=',
    '--install-modules=linux normal configfile search search_fs_file fat part_gpt echo test all_video efi_gop gzio',
    '--modules=part_gpt fat search search_fs_file', `boot/grub/grub.cfg=${cfg}`,
  ]);
  return readFileSync(out);
}

const MiB = 1024 * 1024;

/** The whole-disk image (raw, 64 MiB) and its sha256. */
export function buildInstanceImage(dir: string): { file: string; sha256: string } {
  const mods = moduleFiles(['virtio_pci', 'virtio_blk', 'isofs']);
  const init = `${EARLY}${modulesInit(mods)}
sleep 1
echo "TSBM-TEST-INSTANCE booted from $(cat /proc/cmdline)"
for p in /dev/vd*[0-9]; do
  if mount -t iso9660 -o ro "$p" /mnt 2>/dev/null; then
    if [ -f /mnt/openstack/latest/meta_data.json ]; then
      echo "${META_BEGIN} $(base64 -w0 < /mnt/openstack/latest/meta_data.json) ${META_END}"
    fi
    umount /mnt
  fi
done
sync
poweroff -f
`;
  const initrd = programsInitramfs({ busybox: BUSYBOX!, programs: mods, files: [], init });
  const esp = buildFat(
    [
      { path: 'EFI/BOOT/BOOTX64.EFI', data: diskGrub(dir) },
      { path: 'vmlinuz', data: readFileSync(KERNEL!) },
      { path: 'initrd.img', data: initrd },
      { path: 'tsbm-test-instance', data: Buffer.from('the ESP of tsbm\'s test instance image\n') },
    ],
    { label: 'TSBM-ESP' },
  );
  const file = join(dir, 'instance.raw');
  const espStart = MiB;
  const size = 64 * MiB;
  if (espStart + esp.length > size - MiB) throw new Error(`test image: the ESP (${esp.length} bytes) does not fit in ${size} bytes`);
  writeFileSync(file, Buffer.alloc(size));
  const espSectors = Math.ceil(esp.length / 512);
  sh(['sgdisk', '-n', `1:2048:+${espSectors}`, '-t', '1:ef00', '-c', '1:EFI System', file]);
  // sgdisk -q may exit 0 having written nothing (TESTLAB.md): read the table back.
  if (!/EF00/.test(sh(['sgdisk', '-p', file]).stdout)) throw new Error('test image: sgdisk wrote no ESP');
  const img = readFileSync(file);
  esp.copy(img, espStart);
  writeFileSync(file, img);
  return { file, sha256: createHash('sha256').update(img).digest('hex') };
}
