# Shared by the simulated tools: load the node description and map image refs to catalogue files.
# shellcheck shell=sh
[ -n "${TSBM_SIM_ENV:-}" ] && [ -r "$TSBM_SIM_ENV" ] && . "$TSBM_SIM_ENV"
: "${TSBM_SIM_ROOT:?not running inside a simulated node}"
SIM_DISK="$TSBM_SIM_ROOT/dev/vda"
SIM_STATE="$TSBM_SIM_ROOT/sim"

sim_key() { printf '%s' "$1" | tr '/:@' '___'; }
sim_image_env() { printf '%s/%s.env' "$TSBM_SIM_IMAGES" "$(sim_key "$1")"; }
sim_registry_of() {
  case "$1" in
    */*) r=${1%%/*}; case "$r" in *.*|*:*|localhost) printf '%s' "$r"; return;; esac;;
  esac
  printf 'docker.io'
}
