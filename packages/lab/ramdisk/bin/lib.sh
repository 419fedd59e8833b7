# Shared by the simulated tools: load the node description and map image refs to catalogue files.
# shellcheck shell=sh
# Only assignments and function definitions: safe to source again (podman sources sim-bootc,
# which sources this too).
[ -n "${TSBM_SIM_ENV:-}" ] && [ -r "$TSBM_SIM_ENV" ] && . "$TSBM_SIM_ENV"
: "${TSBM_SIM_ROOT:?not running inside a simulated node}"
SIM_DISK="$TSBM_SIM_ROOT/dev/vda"
SIM_STATE="$TSBM_SIM_ROOT/sim"

# Every helper sets a variable instead of printing: a $(...) costs a fork, and a thousand-node
# lab runs these tens of thousands of times.
sim_key() { # KEY=$1 with / : @ as _ (the catalogue's file names)
  # Split on those characters (field splitting, no per-character loop: ~5x faster) and join
  # with _; the last argument keeps a trailing separator's empty field.
  KEY=
  [ -n "$1" ] || return 0
  _ifs=$IFS; IFS='/:@'; set -f
  # shellcheck disable=SC2086
  set -- $1 "${1##*[/:@]}"
  IFS=$_ifs; set +f
  KEY=$1; shift
  while [ $# -gt 1 ]; do KEY=${KEY}_$1; shift; done
  [ -n "$1" ] || KEY=${KEY}_
}
sim_image_env() { sim_key "$1"; ENVF=$TSBM_SIM_IMAGES/$KEY.env; }
sim_disk_bytes() { # DISK_BYTES: the node's disk size (fixed for the lab's life, so node.env has it)
  if [ -n "${TSBM_SIM_DISK_BYTES:-}" ]; then DISK_BYTES=$TSBM_SIM_DISK_BYTES; else DISK_BYTES=$(stat -c %s "$SIM_DISK"); fi
}
sim_copy() { # $1 -> $2 with shell builtins only (small text files)
  { while IFS= read -r _l || [ -n "$_l" ]; do printf '%s\n' "$_l"; done; } < "$1" > "$2"
}
sim_file_has() { # $1 file contains the literal $2
  [ -r "$1" ] || return 1
  while IFS= read -r _l || [ -n "$_l" ]; do
    case $_l in *"$2"*) return 0;; esac
  done < "$1"
  return 1
}
sim_registry_of() { # REG: the registry part of an image reference
  REG=docker.io
  case "$1" in
    */*) _r=${1%%/*}; case "$_r" in *.*|*:*|localhost) REG=$_r;; esac;;
  esac
}
