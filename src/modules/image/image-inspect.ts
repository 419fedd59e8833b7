// The image inspector (src/images/inspect/) on image_write's images: a controller file (file://,
// the cache) is read here; on a ramdisk, the ramdisk sends the first bytes of what it is about to
// write (the URL's first bytes, fetched by its own curl with a Range request; the downloaded
// qcow2; the disk after a raw stream) over the connection, and the controller judges them.
// Nothing interprets an image before that.
import { inspectImage } from '../../images/inspect/detect.js';
import { readHeader } from '../../images/inspect/local-file.js';
import { HEADER_BYTES, type WritableFormat } from '../../images/inspect/types.js';
import { judgeImage, type Verdict } from '../../images/inspect/verdict.js';
import type { ModuleContext } from '../../module-api/types.js';
import { limitFromVars } from '../../util/limits.js';
import { withUrl } from './image-fetch.js';
import { curlReason, URL_ENV } from './image-stream.js';
import { hostError } from '../../module-api/ramdisk-exec.js';

type Ctx = Pick<ModuleContext, 'exec' | 'host' | 'task' | 'vars' | 'signal'>;

// $1 '1' to skip TLS verification. curl's status goes to stderr (stdout is the bytes): a server
// that ignores the Range header is cut off by dd after HEADER_BYTES (curl then ends with 23).
const PEEK_SCRIPT = `k=; [ "$1" = 1 ] && k=-k
{ printf 'url = "%s"\\n' "$${URL_ENV}" | curl -fsSL $k --connect-timeout 30 --max-time 120 -H 'Range: bytes=0-${HEADER_BYTES - 1}' -K -; echo "TSBM_PEEK curl=$?" >&2; } | dd bs=${HEADER_BYTES} count=1 iflag=fullblock status=none`;

/** The first bytes of an image URL, as the ramdisk gets them. */
export async function peekUrl(ctx: Ctx, url: string, shownUrl: string, tlsVerify: boolean): Promise<Buffer> {
  const r = await ctx.exec(['sh', '-c', PEEK_SCRIPT, 'sh', tlsVerify ? '0' : '1'], withUrl(url, { stdoutEncoding: 'latin1', timeout: 150_000, signal: ctx.signal }));
  const bytes = Buffer.from(r.stdout, 'latin1');
  const curlRc = Number(/TSBM_PEEK curl=(\d+)/.exec(r.stderr)?.[1] ?? 255);
  if (bytes.length < HEADER_BYTES && curlRc !== 0) {
    throw hostError(
      ctx,
      `reading the first bytes of ${shownUrl} from the ramdisk failed (${curlReason(curlRc)}); nothing was written`,
      'check the image URL is right and reachable from the ramdisk',
    );
  }
  return bytes;
}

/** The first bytes of a file or disk on the ramdisk. */
export async function peekFile(ctx: Ctx, path: string): Promise<Buffer> {
  const r = await ctx.exec(['dd', `if=${path}`, `bs=${HEADER_BYTES}`, 'count=1', 'iflag=fullblock', 'status=none'], { stdoutEncoding: 'latin1' });
  if (r.rc !== 0) throw hostError(ctx, `reading the first bytes of ${path} failed: ${r.stderr.trim() || `rc ${r.rc}`}`);
  return Buffer.from(r.stdout, 'latin1');
}

export interface JudgeOnHost {
  /** How the image is named in messages. */
  name: string;
  declared?: WritableFormat | undefined;
  /** Said after the refusal: what was (not) done to the node. */
  state: string;
}

/** The inspector's verdict on an image's first bytes, with the host's tsbm_max_image_virtual. */
export function judgeHeader(vars: Ctx['vars'], header: Uint8Array, j: Omit<JudgeOnHost, 'state'>): Verdict {
  return judgeImage(inspectImage(header), { name: j.name, declared: j.declared, maxVirtualBytes: limitFromVars(vars, 'imageVirtualBytes') });
}

/** The format to write the image as, or a host error naming the image and what was found. */
export function formatOrRefuse(ctx: Pick<Ctx, 'host' | 'task' | 'vars'>, header: Uint8Array, j: JudgeOnHost): { format: WritableFormat; virtualSize?: number } {
  const v = judgeHeader(ctx.vars, header, j);
  if (!v.ok) throw hostError(ctx, `${v.message}; ${j.state}`, v.hint);
  return { format: v.format, ...(v.inspection.virtualSize !== undefined ? { virtualSize: v.inspection.virtualSize } : {}) };
}

/** The same judgement on a controller file (a file:// source, a cached download). */
export async function formatOfControllerFile(ctx: Pick<Ctx, 'host' | 'task' | 'vars'>, file: string, j: JudgeOnHost): Promise<{ format: WritableFormat; virtualSize?: number }> {
  return formatOrRefuse(ctx, await readHeader(file), j);
}
