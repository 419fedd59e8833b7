// What goes into the deploy ramdisk `tsbm ramdisk build` makes, per profile: the Debian packages
// docs/ramdisk.md asks for (and the few the ramdisk's own boot needs), and what is pruned from
// the root afterwards so the ramdisk boots in less memory. The recipe is data: its hash is part
// of the cache key, so a change here builds a new ramdisk.

export const RAMDISK_PROFILES = ['image', 'bootc'] as const;
export type RamdiskProfile = (typeof RAMDISK_PROFILES)[number];

export const DEFAULT_SUITE = 'bookworm';
export const DEFAULT_MIRROR = 'http://deb.debian.org/debian';
/** Debian's archive components the packages come from: the NIC firmware is in non-free-firmware. */
export const COMPONENTS = ['main', 'non-free-firmware'];

/** Why each package is there: docs/ramdisk.md's tables, or the ramdisk's own boot. */
const BASE: Record<string, string> = {
  'linux-image-amd64': "Debian's generic kernel and its driver modules (NICs, RAID/HBA, NVMe, virtio)",
  'firmware-linux-free': 'free firmware the kernel loads',
  'firmware-bnx2': 'Broadcom NetXtreme II NIC firmware',
  'firmware-bnx2x': 'Broadcom NetXtreme II 10G NIC firmware',
  'firmware-qlogic': 'QLogic NIC and HBA firmware',
  'firmware-misc-nonfree': 'Intel (ice, i915 excluded by pruning) and other NIC firmware',
  udev: 'loads the drivers and firmware of the hardware found (systemd-udevd without systemd)',
  kmod: 'modprobe for udev',
  'util-linux': 'lsblk, blockdev, partx, wipefs, blkid (the per-node volume)',
  fdisk: 'sfdisk',
  gdisk: 'sgdisk',
  iproute2: 'ip (identity by MAC, addresses reported when calling home)',
  curl: 'image downloads; the call home',
  'ca-certificates': 'HTTPS image URLs and callback',
  'openssh-server': 'the SSH server tsbm works through (with sftp-server)',
  busybox: 'init (reaps processes) and udhcpc (DHCP)',
  coreutils: 'dd, sha256sum, tee, mkfifo, cut, stat, sync and the rest',
  findutils: 'find -printf (by_path root device hints)',
  diffutils: 'cmp (erase read-back)',
  'qemu-utils': 'qemu-img (qcow2 images)',
};

const BOOTC: Record<string, string> = {
  podman: 'pulls and runs the bootc image (bootc install to-disk)',
  skopeo: 'image size before a pull (optional)',
  // containers-common depends on the virtual container-network-stack, which debootstrap does not resolve.
  netavark: "podman's network stack (container-network-stack)",
  iptables: "netavark's firewall rules",
};

export function profilePackages(profile: RamdiskProfile): Record<string, string> {
  return profile === 'bootc' ? { ...BASE, ...BOOTC } : { ...BASE };
}

/**
 * Removed from the root after the packages are installed: what no deploy reads (documentation,
 * locales) and drivers and firmware for hardware a provisioning ramdisk does not use (graphics,
 * sound, media, wireless). Paths relative to the root; `KVER` is the kernel's version.
 */
export const PRUNE = [
  'usr/share/doc',
  'usr/share/man',
  'usr/share/info',
  'usr/share/locale',
  'var/cache/apt/archives',
  'var/lib/apt/lists',
  'boot',
  'usr/lib/firmware/amdgpu',
  'usr/lib/firmware/radeon',
  'usr/lib/firmware/nvidia',
  'usr/lib/firmware/i915',
  'usr/lib/firmware/intel/ipu',
  'usr/lib/firmware/mediatek',
  'usr/lib/firmware/ath10k',
  'usr/lib/firmware/ath11k',
  'usr/lib/firmware/iwlwifi-*',
  'usr/lib/modules/KVER/kernel/drivers/gpu',
  'usr/lib/modules/KVER/kernel/drivers/media',
  'usr/lib/modules/KVER/kernel/drivers/net/wireless',
  'usr/lib/modules/KVER/kernel/drivers/bluetooth',
  'usr/lib/modules/KVER/kernel/drivers/staging',
  'usr/lib/modules/KVER/kernel/drivers/iio',
  'usr/lib/modules/KVER/kernel/drivers/infiniband',
  'usr/lib/modules/KVER/kernel/drivers/isdn',
  'usr/lib/modules/KVER/kernel/sound',
  'usr/lib/modules/KVER/kernel/net/wireless',
  'usr/lib/modules/KVER/kernel/net/mac80211',
  'usr/lib/modules/KVER/kernel/net/bluetooth',
];
