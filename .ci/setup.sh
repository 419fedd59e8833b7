#!/usr/bin/env bash
# Prepares a fresh Debian 12 CI machine (as root, non-interactive, idempotent) for the e2e
# tests: real OpenSSH and dropbear in network namespaces, podman with runc, an htpasswd
# registry, loop disks, ISO and partition tools; busybox, Debian's dynamic one (a busybox-only
# ramdisk for the transfer tests, whose static twin would run missing applets anyway, and the tiny
# initrd the installer boot ISO test boots, with its libraries); gcc, which builds the simulated lab's C spawner; and chromium, which loads
# the HTML run report headless as a person would see it. For the installer boot ISO built from
# a kernel and ramdisk: GRUB for UEFI (grub-mkstandalone), mtools and dosfstools (its FAT image
# read back), and qemu with OVMF and a kernel (linux-image-cloud-amd64, /boot/vmlinuz-*) to boot it. See
# /work/shared/TESTLAB.md for why each setting is here. etcd-server: the node store's etcd tests start
# their own etcd on 127.0.0.1 (the package starts none here: no systemd); etcd-client: etcdctl, which
# sets up the users and roles of the auth test.
set -euo pipefail

# Not root: fail. A CI run without these packages would skip about 100 tests; under CI=true the
# skip guard (test/skip-guard.ts) fails such a run anyway, this says why first.
if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: must run as root (it installs packages, and the e2e tests need root); run: sudo bash .ci/setup.sh" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
PKGS=(openssh-server openssh-client iproute2 podman runc docker-registry apache2-utils genisoimage xorriso
  gdisk fdisk util-linux qemu-utils python3-sushy ansible-core openssl curl coreutils gcc libc6-dev
  dropbear-bin busybox chromium debootstrap grub-efi-amd64-bin mtools dosfstools qemu-system-x86 ovmf
  linux-image-cloud-amd64 etcd-server etcd-client tmux)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Debian's docker-registry package starts a system registry on :5000; tests run their own.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet docker-registry 2>/dev/null; then
  systemctl stop docker-registry || true
fi
# Likewise etcd-server's system etcd on :2379 where systemd runs; the tests start their own.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then
  systemctl stop etcd || true
fi

# crun fails here (hybrid cgroups, setrlimit refused): runc + cgroupfs, no default ulimits.
mkdir -p /etc/containers
cat > /etc/containers/containers.conf <<'CONF'
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
CONF
mkdir -p /etc/containers/registries.conf.d

# sshd's privilege separation directory.
mkdir -p /run/sshd
chmod 0755 /run/sshd

# What the tests run, read back: a package that installed without the program is a failure here,
# not a skipped test later.
PROGS=(sshd ssh ssh-agent ssh-add ip podman runc docker-registry htpasswd genisoimage isoinfo xorriso sgdisk sfdisk
  partx losetup blkid nsenter qemu-img ansible-playbook ansible-vault openssl curl gcc dropbear busybox chromium
  debootstrap grub-mkstandalone mcopy mdir mtype mkfs.fat fsck.fat qemu-system-x86_64 etcd etcdctl tmux)
absent=()
for c in "${PROGS[@]}"; do command -v "$c" >/dev/null 2>&1 || absent+=("$c"); done
/usr/bin/python3 -c 'import sushy' 2>/dev/null || absent+=("python3 sushy")
ls /boot/vmlinuz-* >/dev/null 2>&1 || absent+=("a kernel in /boot (linux-image-cloud-amd64)")
[ -e /usr/share/OVMF/OVMF_CODE.fd ] || [ -e /usr/share/OVMF/OVMF_CODE_4M.fd ] || absent+=("OVMF firmware (ovmf)")
if [ "${#absent[@]}" -gt 0 ]; then
  echo "setup.sh: still missing after install: ${absent[*]}" >&2
  exit 1
fi
echo "setup.sh: ready"
