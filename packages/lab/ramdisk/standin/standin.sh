# Shared by the stand-ins in this directory (sourced, not run): hand over to the machine's own
# tool of that name when it has one, else run tsbm's TypeScript stand-in (packages/lab/src/gpt for the
# partitioning tools, packages/lab/src/curl; built to packages/lab/dist/.../<tool>-cli.js) on the node binary the
# lab runs on.
# shellcheck shell=sh
# TSBM_SIM_STANDINS=sfdisk,partx (or all) picks the stand-in even where the real tool is
# installed (tests, and a look at what a bare machine runs).
standin_exec() { # $1 tool, then its arguments
  _tool=$1; shift
  case ",${TSBM_SIM_STANDINS:-}," in
    *",all,"*|*",$_tool,"*) ;;
    *)
      for _d in /usr/sbin /sbin /usr/bin /bin; do
        [ -x "$_d/$_tool" ] && exec "$_d/$_tool" "$@"
      done;;
  esac
  # $0 is absolute (found on the ramdisk's PATH): the package is four levels up, no fork needed.
  case $_tool in
    curl) _cli="${0%/*}/../../dist/curl/curl-cli.js";;
    *) _cli="${0%/*}/../../dist/gpt/$_tool-cli.js";;
  esac
  if [ ! -f "$_cli" ]; then
    echo "$_tool: not installed on this machine, and tsbm's stand-in $_cli is missing: run 'npm run build'" >&2
    exit 127
  fi
  # Inside a simulated node, record what the stand-in ran (like sim-bootc's bootc-args).
  [ -d "${TSBM_SIM_ROOT:-/nonexistent}/sim" ] && printf '%s\n' "$*" >> "$TSBM_SIM_ROOT/sim/$_tool-standin-args"
  # The lab passes the node binary running it: the ramdisk's PATH may not hold an nvm-installed node.
  exec "${TSBM_SIM_NODE_BIN:-node}" "$_cli" "$@"
}
