#!/bin/sh
# Runs a command as a fresh minimal Debian machine would, in a chroot of the cached minbase root
# with the staged files (node, npm, the checkout) laid over it. Run it under
# `unshare --mount --propagation private`: every mount below is private to this process and
# gone with it, so nothing is left mounted even when the command or this script is killed.
# Usage: minbase-chroot.sh ROOT STAGE WORK NPM_CACHE CHECKOUT COMMAND [ENV=VALUE...]
set -eu
root=$1 stage=$2 work=$3 npm_cache=$4 checkout=$5 command=$6
shift 6
mkdir -p "$work/upper" "$work/overlay-work" "$work/merged"
mount -t overlay overlay -o "lowerdir=$stage:$root,upperdir=$work/upper,workdir=$work/overlay-work" "$work/merged"
r=$work/merged
mount -t proc proc "$r/proc"
mount -t sysfs sysfs "$r/sys"
# A /dev of its own with the character devices programs expect, not the machine's disks.
mount -t tmpfs -o mode=0755,size=1m tmpfs "$r/dev"
for spec in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
  IFS=: read -r name major minor <<SPEC
$spec
SPEC
  mknod -m 0666 "$r/dev/$name" c "$major" "$minor"
done
mkdir "$r/dev/pts" "$r/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$r/dev/pts"
ln -s pts/ptmx "$r/dev/ptmx"
ln -s /proc/self/fd "$r/dev/fd"
ln -s /proc/self/fd/0 "$r/dev/stdin"
ln -s /proc/self/fd/1 "$r/dev/stdout"
ln -s /proc/self/fd/2 "$r/dev/stderr"
mount -t tmpfs -o mode=1777 tmpfs "$r/dev/shm"
# npm's download cache survives between runs; nothing else of the machine is visible.
mount --bind "$npm_cache" "$r/root/.npm"
cd /
exec chroot "$r" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOME=/root LANG=C.UTF-8 "$@" /bin/sh -c "cd '$checkout' && $command"
