// Ramdisk-side HTTP helpers for image_write: the image size (HEAD) for the memory check and
// progress totals, and the resumable qcow2 download. The URL goes through secretEnv and a curl
// config line on stdin, never argv.
import type { ExecOptions } from '../../connection/types.js';
import type { ModuleContext } from '../../module-api/types.js';
import { URL_ENV } from './image-stream.js';

type Exec = Pick<ModuleContext, 'exec'>;

const CONFIG_FROM_ENV = `printf 'url = "%s"\\n' "$${URL_ENV}"`;

/** Last Content-Length of a HEAD (after redirects), or undefined. */
export function parseContentLength(headers: string): number | undefined {
  let len: number | undefined;
  for (const m of headers.matchAll(/^content-length:\s*(\d+)\s*$/gim)) len = Number(m[1]);
  return len;
}

export async function remoteContentLength(
  ctx: Exec,
  url: string,
  tlsVerify: boolean,
): Promise<number | undefined> {
  const script = `${CONFIG_FROM_ENV} | curl -fsSIL ${tlsVerify ? '' : '-k '}--connect-timeout 30 --max-time 60 -K -`;
  const r = await ctx.exec(['sh', '-c', script], { secretEnv: { [URL_ENV]: url } }).catch(() => undefined);
  return r?.rc === 0 ? parseContentLength(r.stdout) : undefined;
}

// $1 output file, $2 '1' to skip TLS verification, $3 retries. `-C -` resumes from the
// partial file with an HTTP Range request, also across curl's own retries.
const DOWNLOAD_SCRIPT = `set -u
k=; [ "$2" = 1 ] && k=-k
${CONFIG_FROM_ENV} | curl -fsSL $k --connect-timeout 30 --retry "$3" --retry-all-errors --retry-delay 2 -C - -o "$1" -K -`;

export function downloadArgv(file: string, tlsVerify: boolean, retries: number): string[] {
  return ['sh', '-c', DOWNLOAD_SCRIPT, 'sh', file, tlsVerify ? '0' : '1', String(retries)];
}

export function withUrl(url: string, opts: ExecOptions = {}): ExecOptions {
  return { ...opts, secretEnv: { ...(opts.secretEnv ?? {}), [URL_ENV]: url } };
}
