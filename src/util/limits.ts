// How much tsbm takes from peers it does not trust (BMCs, ramdisks, image servers), and for how
// long. Each bound is a default an operator can raise with a variable (inventory, play vars or
// -e); docs/security.md lists them. Without them, one broken or hostile peer could make the
// controller buffer gigabytes or wait forever.
import { TsbmError } from '../errors.js';

const KIB = 1024;
export const MIB = 1024 * KIB;
const GIB = 1024 * MIB;

export interface Limits {
  /** Bytes of stdout, and of stderr, kept per remote command (head and tail; the middle is dropped). */
  outputBytes: number;
  /** Bytes a file read from a host (SFTP or piped) may have. */
  getBytes: number;
  /** Bytes of one BMC response body. */
  redfishBodyBytes: number;
  /** Bytes of one controller-side download (the image cache). */
  downloadBytes: number;
  /** Milliseconds a remote command may run when neither the module nor the task's `timeout:` says. */
  commandTimeoutMs: number;
  /** Milliseconds a controller-side download may go without receiving a byte. */
  downloadIdleMs: number;
  /** The largest virtual size an image's header may declare (what a conversion to raw writes). */
  imageVirtualBytes: number;
}

export const DEFAULT_LIMITS: Readonly<Limits> = {
  outputBytes: 16 * MIB,
  getBytes: 64 * MIB,
  redfishBodyBytes: 16 * MIB,
  downloadBytes: 64 * GIB,
  commandTimeoutMs: 1800_000,
  downloadIdleMs: 120_000,
  imageVirtualBytes: 1024 * GIB,
};

/** The variable that sets each limit. */
const LIMIT_VARS: Readonly<Record<keyof Limits, string>> = {
  outputBytes: 'tsbm_max_output',
  getBytes: 'tsbm_max_get',
  redfishBodyBytes: 'tsbm_max_redfish_body',
  downloadBytes: 'tsbm_max_download',
  commandTimeoutMs: 'tsbm_command_timeout',
  downloadIdleMs: 'tsbm_download_idle_timeout',
  imageVirtualBytes: 'tsbm_max_image_virtual',
};

const UNITS: Record<string, number> = { '': 1, b: 1, k: KIB, kb: KIB, kib: KIB, m: MIB, mb: MIB, mib: MIB, g: GIB, gb: GIB, gib: GIB, t: GIB * KIB, tb: GIB * KIB, tib: GIB * KIB };

/** A byte count: a whole number, or a number with a unit (`64MiB`, `2 GiB`, `512k`); binary units. */
function parseByteSize(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v > 0 ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(v);
  const unit = m ? UNITS[(m[2] ?? '').toLowerCase()] : undefined;
  if (!m || unit === undefined) return undefined;
  const n = Math.floor(Number(m[1]) * unit);
  return n > 0 && Number.isSafeInteger(n) ? n : undefined;
}

/** Seconds (a positive number, or its string form) as milliseconds. */
function parseSeconds(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : Number.NaN;
  return Number.isFinite(n) && n > 0 ? Math.round(n * 1000) : undefined;
}

/** One limit from the host's vars, else its default; a value that is not a size or time is an options error. */
export function limitFromVars<K extends keyof Limits>(vars: Record<string, unknown>, key: K): number {
  const name = LIMIT_VARS[key];
  const raw = vars[name];
  if (raw === undefined || raw === null || raw === '') return DEFAULT_LIMITS[key];
  const timed = key === 'commandTimeoutMs' || key === 'downloadIdleMs';
  const v = timed ? parseSeconds(raw) : parseByteSize(raw);
  if (v === undefined) {
    throw new TsbmError('options', `${name} ${JSON.stringify(raw)} is not ${timed ? 'a number of seconds' : 'a size'}`, {
      hint: timed ? `give seconds, e.g. ${name}: 3600` : `give bytes or a size with a unit, e.g. ${name}: 64MiB`,
    });
  }
  return v;
}

/** Bytes in a short human form for messages (`16 MiB`). */
export function fmtLimit(bytes: number): string {
  for (const [unit, size] of [['TiB', GIB * KIB], ['GiB', GIB], ['MiB', MIB], ['KiB', KIB]] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}

/** Milliseconds in a short human form for messages (`400 ms`, `120s`). */
export function fmtDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)}s`;
}
