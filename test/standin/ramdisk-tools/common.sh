# Shared by the simulated ramdisk tools (sourced, not run). A simulated node is a state
# directory ($TSBM_SIM_STATE) holding disk.img (its only disk, seen as $TSBM_SIM_DISK_DEV)
# and small files that steer the tools (see README.md next to this file).
set -u
: "${TSBM_SIM_STATE:?TSBM_SIM_STATE must name the simulated node state directory}"
SIM_DEV="${TSBM_SIM_DISK_DEV:-/dev/vda}"
SIM_DISK="$TSBM_SIM_STATE/disk.img"

# The real tool of that name, skipping the simulated ones that come first on PATH.
real_bin() {
  for d in /usr/sbin /usr/bin /sbin /bin; do
    if [ -x "$d/$1" ]; then echo "$d/$1"; return 0; fi
  done
  echo "tsbm-sim: no real $1 installed" >&2
  return 127
}

# Refuses every device except this node's own disk: the CI machine's disks are visible too.
require_own_disk() {
  if [ "$1" != "$SIM_DEV" ]; then
    echo "tsbm-sim: refusing to touch $1: the only disk of this simulated node is $SIM_DEV" >&2
    exit 1
  fi
  if [ ! -f "$SIM_DISK" ]; then
    echo "tsbm-sim: $SIM_DEV has no backing file $SIM_DISK" >&2
    exit 1
  fi
}

record() { # file, line
  printf '%s\n' "$2" >>"$TSBM_SIM_STATE/$1"
}
