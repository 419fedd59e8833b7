// Turns whatever `instance_info.configdrive` holds into ISO bytes on the controller: a dict
// (built here), a gzip+base64 ISO string, or an http(s) URL whose body is either of the
// string forms or a raw ISO (Ironic accepts the same three).
import { gunzipSync } from 'node:zlib';
import { Value } from '@sinclair/typebox/value';
import { TsbmError } from '../errors.js';
import {
  type ConfigDriveDict,
  MAX_CONFIGDRIVE_BYTES,
  type NodeIdentity,
  buildConfigDriveIso,
  configDriveDictSchema,
} from './content.js';
import { isIso9660 } from './iso9660.js';
import { idleTimer } from '../util/idle-timer.js';
import { DEFAULT_LIMITS, fmtDuration } from '../util/limits.js';
import { followRedirect, RedirectRefused } from '../util/redirect.js';

type ConfigDriveSource = 'dict' | 'iso-string' | 'url';

export interface ResolvedConfigDrive {
  iso: Buffer;
  source: ConfigDriveSource;
}

export interface ResolveOptions {
  signal?: AbortSignal;
  /** Injected in tests; defaults to the global fetch. */
  fetch?: typeof fetch;
  /** A download that receives nothing for this long fails (default tsbm_download_idle_timeout's 120 s). */
  idleMs?: number;
}

const HINT =
  'set instance_info.configdrive to a dict (meta_data, network_data, user_data, vendor_data), a gzip+base64 ISO string, or an http(s) URL';

function err(message: string, hint = HINT): TsbmError {
  return new TsbmError('runtime', `config drive: ${message}`, { hint });
}

function checkSize(n: number, what: string): void {
  if (n > MAX_CONFIGDRIVE_BYTES) {
    throw err(
      `${what} is ${n} bytes, more than the 64 MiB a config drive partition holds`,
      'make user_data and the other files smaller',
    );
  }
}

/** Decodes a (gzip+)base64 ISO string, or takes raw ISO bytes, and checks it is ISO 9660. */
export function decodeIsoPayload(payload: Buffer, what: string): Buffer {
  let data = payload;
  if (!isIso9660(data)) {
    const text = data.toString('latin1').replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]+=*$/.test(text)) throw err(`${what} is neither an ISO 9660 image nor base64`);
    data = Buffer.from(text, 'base64');
    if (data[0] === 0x1f && data[1] === 0x8b) {
      try {
        data = gunzipSync(data, { maxOutputLength: MAX_CONFIGDRIVE_BYTES + 1 });
      } catch (e) {
        const tooBig =
          (e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' ||
          /larger than|too large/i.test(String(e));
        if (tooBig) checkSize(MAX_CONFIGDRIVE_BYTES + 1, `${what} (unpacked)`);
        throw err(`${what} is base64 but not valid gzip: ${(e as Error).message}`);
      }
    }
  }
  checkSize(data.length, what);
  if (!isIso9660(data))
    throw err(`${what} does not hold an ISO 9660 image (no CD001 volume descriptor at sector 16)`);
  return data;
}

const REDIRECTS = 5;

/**
 * The body at `url`, bounded: redirects are followed here (at most five, never from https to
 * http), a server that goes quiet for idleMs is dropped, and the size is capped as it arrives.
 */
async function download(url: string, opts: ResolveOptions): Promise<Buffer> {
  const f = opts.fetch ?? fetch;
  const idleMs = opts.idleMs ?? DEFAULT_LIMITS.downloadIdleMs;
  const idle = idleTimer(idleMs, () => new Error(`nothing arrived for ${fmtDuration(idleMs)}`));
  const signal = opts.signal ? AbortSignal.any([opts.signal, idle.signal]) : idle.signal;
  const hint = 'check the URL is reachable from the controller';
  try {
    let at = url;
    let res: Response;
    for (let hops = 0; ; hops++) {
      try {
        res = await f(at, { signal, redirect: 'manual' });
      } catch (e) {
        const why = idle.signal.aborted ? (idle.signal.reason as Error).message : (e as Error).message;
        throw err(`cannot download ${url}: ${why}`, hint);
      }
      idle.kick();
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location) break;
      await res.body?.cancel().catch(() => undefined);
      if (hops === REDIRECTS) throw err(`downloading ${url}: more than ${REDIRECTS} redirects`, hint);
      try {
        at = followRedirect(at, location);
      } catch (e) {
        if (e instanceof RedirectRefused) throw err(`downloading ${url}: ${e.message}`, 'give the https URL the file really is at');
        throw e;
      }
    }
    if (!res.ok) throw err(`downloading ${url} gave HTTP ${res.status}`, hint);
    const declared = Number(res.headers.get('content-length') ?? 0);
    checkSize(declared, `the download from ${url}`);
    const chunks: Buffer[] = [];
    let total = 0;
    if (res.body) {
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          idle.kick();
          total += chunk.length;
          // base64 of 64 MiB is 4/3 larger; allow that much before giving up.
          if (total > MAX_CONFIGDRIVE_BYTES * 1.4) checkSize(total, `the download from ${url}`);
          chunks.push(Buffer.from(chunk));
        }
      } catch (e) {
        if (e instanceof TsbmError) throw e;
        const why = idle.signal.aborted ? (idle.signal.reason as Error).message : (e as Error).message;
        throw err(`downloading ${url} failed after ${total} bytes: ${why}`, hint);
      }
    }
    return Buffer.concat(chunks);
  } finally {
    idle.stop();
  }
}

export async function resolveConfigDrive(
  value: unknown,
  node: NodeIdentity,
  opts: ResolveOptions = {},
): Promise<ResolvedConfigDrive> {
  if (value === undefined || value === null || value === '') throw err('no config drive given');
  if (typeof value === 'string') {
    const s = value.trim();
    if (/^https?:\/\//i.test(s))
      return { iso: decodeIsoPayload(await download(s, opts), `the download from ${s}`), source: 'url' };
    return {
      iso: decodeIsoPayload(Buffer.from(s, 'latin1'), 'the configdrive string'),
      source: 'iso-string',
    };
  }
  if (typeof value !== 'object' || Array.isArray(value))
    throw err(`unsupported value of type ${Array.isArray(value) ? 'list' : typeof value}`);
  if (!Value.Check(configDriveDictSchema, value)) {
    const first = [...Value.Errors(configDriveDictSchema, value)][0];
    throw err(`invalid dict at ${first?.path || '/'}: ${first?.message ?? 'invalid'}`);
  }
  const iso = buildConfigDriveIso(value as ConfigDriveDict, node);
  checkSize(iso.length, 'the built ISO');
  return { iso, source: 'dict' };
}
