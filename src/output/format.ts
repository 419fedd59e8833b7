// Small formatters shared by the text renderers: durations, sizes, loop items, one-line text.
import type { TsbmEvent } from './events.js';

/** `0.4s`, `12.3s`, `1m02s`, `1h02m03s`: stable, short, sortable by eye. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) ms = 0;
  if (ms < 60_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)}s`;
  const total = Math.floor(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}h${pad(m)}m${pad(s)}s` : `${m}m${pad(s)}s`;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function formatBytes(n: number): string {
  let v = n;
  let i = 0;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(1)} ${UNITS[i]}`;
}

/**
 * Collapses whitespace runs (incl. newlines) so one result stays on one line. Messages are
 * kept whole (their end is usually the advice); `max` is for labels such as loop items.
 */
export function oneLine(text: string, max = Number.POSITIVE_INFINITY): string {
  const s = text.replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A loop item as Ansible shows it: `(item=x)`; objects as compact JSON. */
export function formatItem(item: unknown): string {
  if (item === undefined) return '';
  const text = typeof item === 'string' ? item : JSON.stringify(item) ?? String(item);
  return ` (item=${oneLine(text, 80)})`;
}

/**
 * The detail of a progress event: `message · 1.2 GiB/4.0 GiB 30% ETA 1m02s · 45.0s`.
 * ETA is linear from the elapsed time; it is only shown when both sides are known.
 */
export function formatProgress(p: {
  message: string;
  current?: number;
  total?: number;
  unit?: string;
  elapsedMs?: number;
}, showElapsed = true): string {
  const parts = [oneLine(p.message)]; // whole: a wait's last error is what the operator needs
  if (p.current !== undefined) {
    const fmt = (n: number) => (p.unit === 'bytes' ? formatBytes(n) : `${n}${p.unit ? ` ${p.unit}` : ''}`);
    let amount = fmt(p.current);
    if (p.total !== undefined && p.total > 0) {
      amount = `${fmt(p.current)}/${fmt(p.total)} ${Math.floor((p.current / p.total) * 100)}%`;
      if (p.elapsedMs !== undefined && p.current > 0 && p.current < p.total) {
        amount += ` ETA ${formatDuration((p.elapsedMs * (p.total - p.current)) / p.current)}`;
      }
    }
    parts.push(amount);
  }
  if (showElapsed && p.elapsedMs !== undefined) parts.push(formatDuration(p.elapsedMs));
  return parts.join(' · ');
}

/** Compact JSON for -v argument/result lines; never throws (cycles, BigInt). */
/**
 * A problem found before the run, as `tsbm validate` prints it: `file:line:col: message (hint)`.
 * Every output mode shows this same line (JUnit as the failure message).
 */
export function problemLine(e: {
  message: string;
  hint?: string;
  pos?: { file: string; line: number; col: number };
}): string {
  const where = e.pos ? `${e.pos.file}:${e.pos.line}:${e.pos.col}: ` : '';
  return `${where}${e.message}${e.hint ? ` (${e.hint})` : ''}`.replace(/\s*\n\s*/g, ' ');
}

export function compactJson(value: unknown): string {
  try {
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)) ?? 'null';
  } catch {
    return '"<unserializable>"';
  }
}

// Escape sequences and control characters from remote output or names must not reach the
// operator's terminal (they could clear it or rewrite lines), and plain logs promise none.
const ESCAPES = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]?/g;
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f\x9b]/g;

/** Text safe to print: ANSI sequences removed, other controls shown as U+FFFD; tabs and newlines kept. */
export function sanitize(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(ESCAPES, '').replace(CONTROLS, '\uFFFD');
}

/**
 * The event without the module arguments and result that only -v shows. The text renderers
 * sanitize what they get: below -v the payload (command output, inspect JSON) was a fleet
 * run's largest rendering cost, for nothing printed.
 */
export function withoutPayload(e: TsbmEvent): TsbmEvent {
  if (e.type === 'host_result' && e.result !== undefined) return { ...e, result: undefined };
  if (e.type === 'host_task_start' && e.args !== undefined) return { ...e, args: undefined };
  return e;
}

/** An event (or any value) with every string sanitized, for the text renderers. */
export function sanitizeDeep<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return sanitize(value) as T;
  if (depth > 30 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => sanitizeDeep(v, depth + 1)) as T;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[sanitize(k)] = sanitizeDeep(v, depth + 1);
  return out as T;
}
