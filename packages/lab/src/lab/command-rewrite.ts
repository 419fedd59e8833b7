// The simulated ramdisk runs every command as a real process on this machine, so each node
// needs its own /dev, /run, /tmp, /etc, /var, /sys and /proc without root or a chroot: absolute
// paths under those roots in the command line are rewritten into the node's sandbox directory.
// Real tools (cat, dd, sgdisk, sfdisk, partx, sha256sum, rm) then work on the node's files, and the
// node's disk is the sparse file <root>/dev/vda. Character devices every shell script uses
// (/dev/null, /dev/zero, /dev/urandom, /dev/std*, /dev/fd) keep pointing at the real ones.

const MAPPED = '(?:dev|run|tmp|etc|var|sys|proc)';
const KEEP = '(?!/dev/(?:null|zero|u?random|stdin|stdout|stderr|fd)(?:[/\\s\'":;)|&>]|$))';
// A path starts after a word boundary a shell or an option can put before it.
const PATH_RE = new RegExp(`(^|[\\s'"=:(])${KEEP}(/${MAPPED})(?=[/\\s'":;)|&>]|$)`, 'g');

/** `extra`: more top-level directories to map (the simulated installer maps /root and /mnt too). */
export function sandboxCommand(command: string, root: string, extra: readonly string[] = []): string {
  const re = extra.length ? new RegExp(PATH_RE.source.replace(MAPPED, `(?:dev|run|tmp|etc|var|sys|proc|${extra.join('|')})`), 'g') : PATH_RE;
  return command.replace(re, (_m, before: string, path: string) => `${before}${root}${path}`);
}
