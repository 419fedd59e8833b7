// The files tsbm adds to the ramdisk's root: its init, the boot script that brings up drivers,
// network and SSH and calls home, the DHCP client's hook, and sshd's settings. Nothing
// node-specific: the controller's key, the callback URL and token and a static network come
// from the per-node volume (labelled TSBM-NODE; see src/ramdisk/node-volume.ts) each boot.

/** The volume label of the per-node medium the ramdisk reads at boot. */
export const NODE_VOLUME_LABEL = 'TSBM-NODE';
/** The ISO's volume label: GRUB finds the kernel and initrd by it. */
export const RAMDISK_ISO_LABEL = 'TSBM-RAMDISK';

export interface RootFile {
  path: string;
  mode: number;
  text: string;
}

// PID 1: the kernel's file systems, then busybox init, which runs the boot script once and
// reaps every orphan afterwards (podman and SSH sessions leave them).
const INIT = `#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm /run /tmp
mount -t devpts -o gid=5,mode=620 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
exec /bin/busybox init
`;

const INITTAB = `::sysinit:/usr/lib/tsbm/boot
::ctrlaltdel:/bin/busybox reboot -f
::shutdown:/bin/sync
`;

// The boot: drivers and firmware (udev), the per-node volume, the network, sshd with host keys
// made now (a new key every boot, reported when calling home), then the call home.
const BOOT = `#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
log() { echo "tsbm-ramdisk: $*"; }
node=/run/tsbm/node
mkdir -p /run/tsbm "$node" /run/sshd
chmod 0700 /run/tsbm
hostname tsbm-ramdisk

log "loading drivers"
/lib/systemd/systemd-udevd --daemon --resolve-names=never
udevadm trigger --type=subsystems --action=add
udevadm trigger --type=devices --action=add
udevadm settle --timeout=60

# The per-node volume: virtual media may show up some seconds after the drivers.
dev=
i=0
while [ $i -lt 30 ]; do
  dev=$(blkid -L ${NODE_VOLUME_LABEL} 2>/dev/null) && [ -n "$dev" ] && break
  i=$((i + 1))
  sleep 1
done
if [ -n "$dev" ] && mount -o ro "$dev" "$node"; then
  log "per-node volume $dev"
else
  log "no per-node volume labelled ${NODE_VOLUME_LABEL}: no key is authorized and nothing calls home"
fi

if [ -s "$node/authorized_keys" ]; then
  mkdir -p /root/.ssh
  chmod 0700 /root/.ssh
  cat "$node/authorized_keys" > /root/.ssh/authorized_keys
  chmod 0600 /root/.ssh/authorized_keys
fi

ip link set lo up
ifname_of() {
  for d in /sys/class/net/*; do
    [ "$(cat "$d/address" 2>/dev/null)" = "$1" ] && { basename "$d"; return 0; }
  done
  return 1
}
if [ -s "$node/network.conf" ]; then
  log "static network from the per-node volume"
  : > /etc/resolv.conf
  while read -r kind a b c; do
    case "$kind" in
      link) if=$(ifname_of "$a") && ip link set "$if" up ${'$'}{b:+mtu "$b"} ;;
      addr) if=$(ifname_of "$a") && ip link set "$if" up && ip addr add "$b" dev "$if" ;;
      route) if=$(ifname_of "$a") && ip route add "$b" via "$c" dev "$if" ;;
      dhcp) if=$(ifname_of "$a") && ip link set "$if" up && { busybox udhcpc -b -i "$if" -s /usr/lib/tsbm/udhcpc -t 10 -T 3 >/dev/null 2>&1 & } ;;
      dns) echo "nameserver $a" >> /etc/resolv.conf ;;
    esac
  done < "$node/network.conf"
else
  for d in /sys/class/net/*; do
    n=$(basename "$d")
    [ "$n" = lo ] && continue
    [ "$(cat "$d/type")" = 1 ] || continue
    ip link set "$n" up
    busybox udhcpc -b -i "$n" -s /usr/lib/tsbm/udhcpc -t 10 -T 3 >/dev/null 2>&1 &
  done
fi

rm -f /etc/ssh/ssh_host_*
ssh-keygen -A >/dev/null
/usr/sbin/sshd
log "sshd started"

if [ -s "$node/callback_url" ] && [ -s "$node/token" ]; then
  /usr/lib/tsbm/call-home &
fi
`;

// What the controller needs to reach and trust this boot: its addresses and MACs (ip -j addr,
// parsed on the controller), the system UUID and the SSH host keys made at boot. Sent once an
// address other than loopback/link-local is up (or after a minute), until the controller
// answers 2xx. The token travels in a header file, never on a command line.
const CALL_HOME = `#!/bin/sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
log() { echo "tsbm-ramdisk: $*"; }
node=/run/tsbm/node
url=$(cat "$node/callback_url")
umask 077
printf 'X-Tsbm-Token: %s\\n' "$(cat "$node/token")" > /run/tsbm/token-header
i=0
while [ $i -lt 60 ] && ! ip -o addr show scope global | grep -q inet; do
  i=$((i + 1))
  sleep 1
done
keys() {
  sep=
  for k in /etc/ssh/ssh_host_ed25519_key.pub /etc/ssh/ssh_host_ecdsa_key.pub /etc/ssh/ssh_host_rsa_key.pub; do
    [ -s "$k" ] || continue
    printf '%s"%s"' "$sep" "$(cut -d' ' -f1,2 "$k")"
    sep=,
  done
}
report() {
  uuid=$(cat /sys/class/dmi/id/product_uuid 2>/dev/null | tr -cd '0-9A-Fa-f-')
  printf '{"version":1,"system_uuid":%s,"host_keys":[%s],"ip_addr":%s}\\n' \\
    "$([ -n "$uuid" ] && printf '"%s"' "$uuid" || echo null)" "$(keys)" "$(ip -j addr)"
}
n=0
while :; do
  report > /run/tsbm/report.json
  if curl -fsS --max-time 30 -H @/run/tsbm/token-header -H 'Content-Type: application/json' --data-binary @/run/tsbm/report.json "$url" >/dev/null; then
    log "called home"
    exit 0
  fi
  n=$((n + 1))
  [ $((n % 12)) = 1 ] && log "cannot call home yet (attempt $n); retrying every 5 s"
  sleep 5
done
`;

// busybox udhcpc's hook: it exports the lease (ip, mask as a prefix length, router, dns).
const UDHCPC = `#!/bin/sh
case "$1" in
  deconfig) ip -4 addr flush dev "$interface" ;;
  bound|renew)
    ip -4 addr flush dev "$interface"
    ip addr add "$ip/\${mask:-24}" dev "$interface"
    for r in $router; do ip route replace default via "$r" dev "$interface"; break; done
    if [ -n "$dns" ]; then : > /etc/resolv.conf; for d in $dns; do echo "nameserver $d" >> /etc/resolv.conf; done; fi
    ;;
esac
exit 0
`;

const SSHD = `# tsbm ramdisk: keys only, root by key (the controller's key from the per-node volume);
# Debian's sshd_config reads this first, and keeps its sftp subsystem.
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
`;

export function bootFiles(): RootFile[] {
  return [
    { path: 'init', mode: 0o755, text: INIT },
    { path: 'etc/inittab', mode: 0o644, text: INITTAB },
    { path: 'usr/lib/tsbm/boot', mode: 0o755, text: BOOT },
    { path: 'usr/lib/tsbm/call-home', mode: 0o755, text: CALL_HOME },
    { path: 'usr/lib/tsbm/udhcpc', mode: 0o755, text: UDHCPC },
    { path: 'etc/ssh/sshd_config.d/tsbm.conf', mode: 0o644, text: SSHD },
  ];
}
