// The raw-image stream: one POSIX sh pipeline on the ramdisk, curl -> tee -> dd, with the
// hash computed from a FIFO fed by the same tee, so the image passes once and is never held
// in memory. The URL arrives in the environment (ExecOptions.secretEnv, sent over stdin) and
// reaches curl as a config line from printf (a shell builtin), so it is in no argv anywhere.
import type { HashAlgo } from '../../module-api/image-source.js';

/** Env var the stream script reads the URL from; must go in ExecOptions.secretEnv. */
export const URL_ENV = 'TSBM_IMAGE_URL';

// $1 device, $2 hash program, $3 private work dir (made by the script), $4 dd oflag value or
// '', $5 '1' to skip TLS verification, $6 curl connect timeout seconds.
// Without pipefail, each stage's status is written to a file; one summary line reports all.
export const STREAM_SCRIPT = `set -u
dev=$1 sum=$2 work=$3 oflag=$4 insecure=$5 ct=$6
mkdir -m 700 "$work" || exit 90
fifo="$work/stream"
mkfifo -m 600 "$fifo" || exit 90
"$sum" < "$fifo" > "$work/sum" &
hp=$!
k=; [ "$insecure" = 1 ] && k=-k
{ printf 'url = "%s"\\n' "$${URL_ENV}" | curl -fsSL $k --connect-timeout "$ct" -K -; echo $? > "$work/curl.rc"; } | tee "$fifo" | dd of="$dev" bs=4M iflag=fullblock \${oflag:+oflag=$oflag} conv=notrunc,fsync status=progress
ddrc=$?
wait "$hp"; hrc=$?
printf 'TSBM_STREAM curl=%s dd=%s hashrc=%s hash=%s\\n' "$(cat "$work/curl.rc" 2>/dev/null || echo 255)" "$ddrc" "$hrc" "$(cut -d' ' -f1 "$work/sum" 2>/dev/null)"
rm -rf "$work"
`;

export function hashProgram(algo: HashAlgo): string {
  return `${algo}sum`;
}

export interface StreamArgs {
  device: string;
  algo: HashAlgo;
  workDir: string;
  directIo: boolean;
  tlsVerify: boolean;
  connectTimeoutS: number;
}

export function streamArgv(a: StreamArgs): string[] {
  return [
    'sh',
    '-c',
    STREAM_SCRIPT,
    'sh',
    a.device,
    hashProgram(a.algo),
    a.workDir,
    a.directIo ? 'direct' : '',
    a.tlsVerify ? '0' : '1',
    String(a.connectTimeoutS),
  ];
}

export interface StreamOutcome {
  curlRc: number;
  ddRc: number;
  hashRc: number;
  hash: string;
  /** Bytes dd reported writing (its last summary), when it printed one. */
  bytes: number | undefined;
}

/** Reads the script's summary line and dd's byte count; undefined when the script never got that far. */
export function parseStreamOutput(stdout: string, stderr: string): StreamOutcome | undefined {
  const m = /TSBM_STREAM curl=(\d+) dd=(\d+) hashrc=(\d+) hash=([0-9a-f]*)/.exec(stdout);
  if (!m) return undefined;
  return {
    curlRc: Number(m[1]),
    ddRc: Number(m[2]),
    hashRc: Number(m[3]),
    hash: m[4] ?? '',
    bytes: lastDdBytes(stderr),
  };
}

/** The byte count in the last `N bytes ... copied` line dd printed (status=progress or summary). */
export function lastDdBytes(text: string): number | undefined {
  let last: number | undefined;
  for (const m of text.matchAll(/(\d+) bytes(?: \([^)]*\))? copied/g)) last = Number(m[1]);
  return last;
}

// curl exit codes that mean the image cannot be fetched as asked; anything else (connection
// refused, reset, timeout, partial transfer) is worth restarting the stream for.
const CURL_PERMANENT = new Set([1, 2, 3, 22, 23, 27, 37, 51, 58, 60, 77, 78]);

export function curlRetryable(rc: number): boolean {
  return rc !== 0 && !CURL_PERMANENT.has(rc);
}

export function curlReason(rc: number): string {
  const known: Record<number, string> = {
    6: 'could not resolve the host',
    7: 'could not connect',
    18: 'the transfer ended early',
    22: 'the server answered with an HTTP error (404, 403, 5xx ...)',
    23: 'writing to the disk pipeline failed',
    28: 'the transfer timed out',
    35: 'TLS handshake failed',
    52: 'the server sent nothing',
    56: 'the connection was reset',
    60: 'the server certificate is not trusted',
  };
  return `curl exit ${rc}${known[rc] ? `: ${known[rc]}` : ''}`;
}
