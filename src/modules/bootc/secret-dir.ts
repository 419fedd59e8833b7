// The ramdisk directory that briefly holds a pull secret (podman's auth file). `mkdir -p -m
// 0700` leaves an existing directory as it is (0755, someone else's, a symlink), and an auth
// file left by a run that was killed mid-pull would stay there for the privileged install
// container to read. So the directory is made fresh for every pull: leftover auth files are
// removed first (also when this pull needs no secret: a resumed run cleans up after the
// killed one before any image code runs), then the directory is removed and created again
// with mode 0700, and the result is checked.

/** Names of the files tsbm writes there: auth-*.json, and the temp names of a write under way. */
const STALE = '"$d"/auth-*.json "$d"/auth-*.json.tsbm-* "$d"/.auth-*.json.tsbm-*';

// $1: the directory; $2: "fresh" (make it anew, 0700) or "clean" (only remove leftovers).
// Prints "removed FILE" per leftover; exits 3-6 with a reason on stderr when it cannot.
const SCRIPT = `d=$1
umask 077
if [ -L "$d" ]; then echo "$d is a symbolic link" >&2; exit 3; fi
if [ -e "$d" ]; then
  [ -d "$d" ] || { echo "$d exists and is not a directory" >&2; exit 3; }
  for f in ${STALE}; do
    if [ -e "$f" ] || [ -L "$f" ]; then rm -f -- "$f" && echo "removed $f"; fi
  done
  [ "$2" = fresh ] || exit 0
  rmdir -- "$d" 2>/dev/null || { echo "$d holds files tsbm did not put there" >&2; exit 4; }
fi
[ "$2" = fresh ] || exit 0
mkdir -p -- "$(dirname -- "$d")" && mkdir -m 0700 -- "$d" || exit 5
set -- $(stat -c '%a %u' -- "$d")
[ "$1" = 700 ] && [ "$2" = "$(id -u)" ] || { echo "$d is mode $1, owner $2 after mkdir (want 700, $(id -u))" >&2; exit 6; }`;

/**
 * The default directory for a node: its own under /run/tsbm (tmpfs), so that nodes whose
 * "ramdisks" share one file system (test labs, namespaces) never clean up each other's files.
 */
export function defaultSecretDir(host: string): string {
  const safe = host.replace(/[^A-Za-z0-9._-]/g, '_');
  return `/run/tsbm/${/^\.*$/.test(safe) ? `_${safe}` : safe}`;
}

/** The argv (one step of a batch) that prepares `dir`: `fresh` before a pull with a secret, else `clean`. */
export function secretDirArgv(dir: string, mode: 'fresh' | 'clean'): string[] {
  return ['sh', '-c', SCRIPT, 'sh', dir, mode];
}

/** The leftover auth files the step removed (from its stdout). */
export function removedLeftovers(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('removed '))
    .map((l) => l.slice('removed '.length));
}

/**
 * argv that runs `argv` only when `dir` is what the `fresh` step leaves: a real directory (no
 * symlink), mode 0700, owned by this user, empty. For a write into it in the same batch as that
 * step: a step that failed leaves something else, and then nothing is written.
 */
export function onlyInFreshDir(dir: string, argv: readonly string[]): string[] {
  const script = `d=$1; shift
if [ -L "$d" ] || [ ! -d "$d" ] || [ "$(stat -c '%a %u' -- "$d")" != "700 $(id -u)" ] || [ -n "$(ls -A -- "$d")" ]; then
  echo "$d is not the fresh private directory tsbm made: nothing written" >&2; exit 125
fi
exec "$@"`;
  return ['sh', '-c', script, 'sh', dir, ...argv];
}
