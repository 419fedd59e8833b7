// Small files written on the ramdisk as steps of a command batch (connection/exec-steps.ts), so
// they cost no round trip of their own: a transfer (SFTP or piped) is one or more round trips
// per file, which on a loaded controller or a slow link cost more than the pull they precede.
import { pooledRandomHex } from '../../util/pooled-random.js';

/**
 * A step that writes `content` to `path` with `mode`, under a temporary name first, then renamed
 * over it: a reader never sees half a file. The content travels in argv (visible in `ps` and the
 * -vvv command log): never use it for a secret; withStdinFile carries those.
 */
export function writeFileStep(path: string, content: string, mode = '644'): string[] {
  const tmp = `${path}.tsbm-${pooledRandomHex(4)}`;
  return [
    'sh',
    '-c',
    'printf %s "$1" > "$2" && chmod "$3" "$2" && mv -f "$2" "$4" || { rm -f "$2"; exit 1; }',
    'sh',
    content,
    tmp,
    mode,
    path,
  ];
}

/** The status withStdinFile exits with when it could not write the file (its command did not run). */
export const STDIN_FILE_FAILED = 125;

/**
 * argv that saves the batch's standard input to `path` (mode 0600, for a secret: it reaches the
 * ramdisk in no command line), then runs `argv`. When the file cannot be written, `argv` does
 * not run and the step exits STDIN_FILE_FAILED. Pair it with a later step that removes `path`.
 */
export function withStdinFile(path: string, argv: readonly string[]): string[] {
  return [
    'sh',
    '-c',
    `umask 077 && cat > "$1" || { echo "cannot write $1" >&2; exit ${STDIN_FILE_FAILED}; }; shift; exec "$@" </dev/null`,
    'sh',
    path,
    ...argv,
  ];
}
