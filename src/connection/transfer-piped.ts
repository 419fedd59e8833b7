// File transfer over an exec channel's stdin/stdout: works on any SSH server that runs commands
// (no SFTP subsystem, dropbear, busybox ramdisks) and under `become` (sudo). The content never
// appears in argv. A put creates a temp file beside the destination with its final mode before
// any byte arrives, checks the size and a hash computed remotely, and only then renames it, so
// the destination never holds a partial file.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import { TsbmError } from '../errors.js';
import { DEFAULT_LIMITS } from '../util/limits.js';
import { pooledRandomHex } from '../util/pooled-random.js';
import type { ExecOptions, ExecResult } from './types.js';

type Exec = (argv: readonly string[], opts?: ExecOptions) => Promise<ExecResult>;


// $1 destination, $2 temp name (same directory), $3 octal mode. stdin: one header line
// "SIZE SHA256 MD5" ("- - -" when the controller cannot know them before sending), then the
// bytes. The hash is the first tool a minimal ramdisk has: sha256sum (coreutils, busybox),
// openssl, shasum, else md5sum (busybox builds without sha256sum), else the size alone.
// `true >` (not `:`, a special builtin whose redirection error would end the shell) creates the
// file under noclobber; the shell's own message says why when it cannot. Prints one status line:
// done (renamed), bad (removed) or held (left for the controller to check and rename).
const PUT_SCRIPT = `umask 077; set -f
d=$1 t=$2 m=$3
IFS=' ' read -r want wsha wmd5 || { echo 'no header on stdin' >&2; exit 90; }
if [ -d "$d" ]; then echo "$d is a directory" >&2; exit 91; fi
trap 'rm -f -- "$t"; exit 129' HUP INT TERM PIPE
set -C
if ! true > "$t"; then exit 92; fi
set +C
if ! chmod "$m" "$t" || ! cat > "$t"; then rm -f -- "$t"; exit 93; fi
set -- $(wc -c < "$t"); n=$1
a=size s=-
if command -v sha256sum >/dev/null 2>&1; then set -- $(sha256sum < "$t"); a=sha256 s=$1
elif command -v openssl >/dev/null 2>&1; then set -- $(openssl dgst -sha256 -r < "$t"); a=sha256 s=$1
elif command -v shasum >/dev/null 2>&1; then set -- $(shasum -a 256 < "$t"); a=sha256 s=$1
elif command -v md5sum >/dev/null 2>&1; then set -- $(md5sum < "$t"); a=md5 s=$1
fi
case $a in sha256) w=$wsha ;; md5) w=$wmd5 ;; *) w=- ;; esac
if [ "$want" = - ]; then echo "tsbm-put held $n $a $s"; exit 0; fi
if [ "$n" != "$want" ] || { [ "$w" != - ] && [ "$s" != "$w" ]; }; then rm -f -- "$t"; echo "tsbm-put bad $n $a $s"; exit 0; fi
mv -f -- "$t" "$d" || { rm -f -- "$t"; exit 94; }
echo "tsbm-put done $n $a $s"`;

// $1 file. Clear words for the two errors a caller acts on; then the bytes, unchanged.
const GET_SCRIPT = `if [ -d "$1" ]; then echo 'is a directory' >&2; exit 21; fi
if [ ! -e "$1" ] && [ ! -L "$1" ]; then echo 'no such file' >&2; exit 2; fi
exec cat -- "$1"`;

export interface PipedPutOptions {
  mode: number;
  become?: { user?: string };
}

/** What the remote side saw: byte count, hash algorithm (sha256, md5 or size) and hash. */
interface Arrived {
  state: 'done' | 'bad' | 'held';
  size: number;
  algo: 'sha256' | 'md5' | 'size';
  sum: string;
}

function parseStatus(stdout: string): Arrived | undefined {
  const m = /^tsbm-put (done|bad|held) (\d*) (sha256|md5|size) (\S+)$/m.exec(stdout);
  if (!m) return undefined;
  return {
    state: m[1] as Arrived['state'],
    size: m[2] ? Number(m[2]) : Number.NaN,
    algo: m[3] as Arrived['algo'],
    sum: m[4] as string,
  };
}

/** The temp name beside `dest`: hidden, random, in the same directory so the rename is atomic. */
export function tempNameFor(dest: string): string {
  return path.posix.join(
    path.posix.dirname(dest),
    `.${path.posix.basename(dest)}.tsbm-${pooledRandomHex(4)}`,
  );
}

/** Size and both hashes of bytes that pass through; `done` once the source has ended. */
class Tally {
  size = 0;
  private readonly sha = createHash('sha256');
  private readonly md5 = createHash('md5');
  sha256 = '';
  md5sum = '';
  update(b: Buffer): void {
    this.size += b.length;
    this.sha.update(b);
    this.md5.update(b);
  }
  finish(): void {
    this.sha256 = this.sha.digest('hex');
    this.md5sum = this.md5.digest('hex');
  }
  matches(a: Arrived): boolean {
    if (a.size !== this.size) return false;
    if (a.algo === 'sha256') return a.sum === this.sha256;
    if (a.algo === 'md5') return a.sum === this.md5sum;
    return true;
  }
}

export async function pipedPut(
  exec: Exec,
  host: string,
  data: Buffer | string | Readable,
  dest: string,
  opts: PipedPutOptions,
): Promise<void> {
  const as = opts.become ? ` as ${opts.become.user ?? 'root'}` : '';
  const fail = (why: string, hint?: string) =>
    new TsbmError('runtime', `cannot write ${dest} on ${host}${as}: ${why}`, {
      host,
      hint:
        hint ??
        (opts.become
          ? 'check that the directory exists and that sudo -n works for the SSH user'
          : 'check that the directory exists and the SSH user may write there'),
    });
  const tmp = tempNameFor(dest);
  const mode = (opts.mode & 0o7777).toString(8);
  const become = opts.become ? { become: opts.become } : {};
  const tally = new Tally();
  let stdin: Buffer | Readable;
  let sourceError: Error | undefined;
  if (typeof data === 'string' || Buffer.isBuffer(data)) {
    const bytes = Buffer.from(data as string | Buffer);
    tally.update(bytes);
    tally.finish();
    stdin = Readable.from([Buffer.from(`${tally.size} ${tally.sha256} ${tally.md5sum}\n`), bytes]);
  } else {
    // Not known before it has passed: the remote side holds the file for the check below.
    stdin = Readable.from(
      (async function* () {
        yield Buffer.from('- - -\n');
        try {
          for await (const chunk of data) {
            const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
            tally.update(b);
            yield b;
          }
        } catch (e) {
          sourceError = e as Error;
          return; // ends stdin early; the size check below then fails and the temp file goes
        }
        tally.finish();
      })(),
    );
  }
  const r = await exec(['sh', '-c', PUT_SCRIPT, 'sh', dest, tmp, mode], { stdin, ...become });
  const arrived = r.rc === 0 ? parseStatus(r.stdout) : undefined;
  if (!arrived) {
    const said = r.stderr.trim().split('\n').filter(Boolean).slice(-2).join(' | ');
    throw fail(said || `the transfer script exited ${r.rc} without a status line`);
  }
  if (arrived.state === 'held') {
    if (!sourceError && tally.matches(arrived)) {
      const mv = await exec(['mv', '-f', '--', tmp, dest], become);
      if (mv.rc === 0) return;
      await exec(['rm', '-f', '--', tmp], become).catch(() => undefined);
      throw fail(mv.stderr.trim() || `mv exited ${mv.rc}`);
    }
    await exec(['rm', '-f', '--', tmp], become).catch(() => undefined);
  }
  if (sourceError)
    throw fail(`reading the content to send failed: ${sourceError.message}`, 'check the source of the file');
  if (arrived.state === 'done') return;
  if (Number.isNaN(arrived.size))
    throw fail('the host could not count the bytes that arrived', 'the host needs wc (coreutils or busybox)');
  if (arrived.size !== tally.size)
    throw fail(
      `the transfer was cut short: ${arrived.size} of ${tally.size} bytes arrived; nothing was written under the final name`,
      'check the connection and the free space in the directory, then try again',
    );
  throw fail(
    `the ${arrived.algo} of what arrived (${arrived.sum}) differs from what was sent; nothing was written under the final name`,
    'the content changed on the way: check the host and try again',
  );
}

export interface PipedGetOptions {
  become?: { user?: string };
  /** Refuse files larger than this many bytes (default tsbm_max_get's, as for SFTP). */
  maxBytes?: number;
}

export async function pipedGet(
  exec: Exec,
  host: string,
  file: string,
  opts: PipedGetOptions = {},
): Promise<Buffer> {
  const as = opts.become ? ` as ${opts.become.user ?? 'root'}` : '';
  const max = opts.maxBytes ?? DEFAULT_LIMITS.getBytes;
  const stop = new AbortController();
  let got = 0;
  const tooBig = new TsbmError(
    'runtime',
    `cannot read ${file} on ${host}${as}: it is larger than ${fmtBytes(max)}, the most a piped get reads`,
    {
      host,
      hint: 'read big files another way (e.g. a command that streams them), or raise tsbm_max_get',
    },
  );
  const r = await exec(['sh', '-c', GET_SCRIPT, 'sh', file], {
    ...(opts.become ? { become: opts.become } : {}),
    stdoutEncoding: 'latin1',
    // The file is the output: keep all of it up to the cap (the output cap would cut its middle).
    maxOutputBytes: max + 1,
    signal: stop.signal,
    onStdout: (chunk) => {
      got += chunk.length;
      if (got > max && !stop.signal.aborted) stop.abort(tooBig);
    },
  });
  if (r.rc !== 0) {
    const said = r.stderr.trim().split('\n').filter(Boolean).slice(-2).join(' | ') || `rc ${r.rc}`;
    const missing = r.rc === 2 && said === 'no such file';
    throw new TsbmError('runtime', `cannot read ${file} on ${host}${as}: ${said}`, {
      host,
      hint: missing
        ? 'check the path'
        : opts.become
          ? 'check the path and that sudo -n works for the SSH user'
          : 'check that the SSH user may read the file',
    });
  }
  return Buffer.from(r.stdout, 'latin1');
}

function fmtBytes(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${n} bytes`;
}
