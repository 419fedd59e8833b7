// bootc_install's pre-install checks made on the ramdisk, in the install's own step: the image
// must be in podman's store (the install runs with --pull=never) and its unpacked size must fit
// the root partition, or bootc (which wipes the disk first) never starts. The controller reads
// the guard's verdict from a marker line on stderr: podman run's own exit codes overlap any
// status the guard could pick.

const MARK = 'tsbm-bootc-guard:';

/** argv that runs `argv` only when `ref` is in podman's store and at most `maxBytes` unpacked. */
export function imageGuardArgv(ref: string, maxBytes: number, argv: readonly string[]): string[] {
  const script = `ref=$1 max=$2; shift 2
size=$(podman image inspect --format '{{.Size}}' "$ref" </dev/null) || { echo "${MARK} missing" >&2; exit 125; }
case $size in ''|*[!0-9]*) ;; *) [ "$size" -le "$max" ] || { echo "${MARK} size $size" >&2; exit 125; };; esac
exec "$@"`;
  return ['sh', '-c', script, 'sh', ref, String(maxBytes), ...argv];
}

export type GuardVerdict = { kind: 'missing' } | { kind: 'too-big'; bytes: number } | undefined;

/** What the guard refused, from the step's stderr; undefined when it let the install run. */
export function guardVerdict(rc: number, stderr: string): GuardVerdict {
  if (rc === 0) return undefined;
  const line = stderr.split('\n').find((l) => l.startsWith(MARK));
  if (!line) return undefined;
  const [, what, n] = line.split(' ');
  if (what === 'missing') return { kind: 'missing' };
  if (what === 'size' && n && /^\d+$/.test(n)) return { kind: 'too-big', bytes: Number(n) };
  return undefined;
}
