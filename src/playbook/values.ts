// Small conversions from raw YAML values to model values, shared by play, task and role parsing.
import { parseError } from '../errors.js';
import type { PathSeg, YamlSource } from '../schema/yaml-source.js';
import type { Expr } from './expr.js';

export function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function isTemplated(v: unknown): v is string {
  return typeof v === 'string' && v.includes('{{');
}

/** `tags: a` / `tags: [a, b]` / `tags: "a,b"` -> ['a', 'b']. */
export function toStringList(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  return list
    .flatMap((x) => String(x).split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** A condition keyword (string, boolean or list of them) as expressions with their positions. */
export function toExprs(v: unknown, src: YamlSource, path: PathSeg[]): Expr[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.map((x, i) => ({ expr: String(x), pos: src.pos([...path, i]) }));
  return [{ expr: String(v), pos: src.pos(path) }];
}

/** A number keyword; a numeric string is accepted, a template is not (these shape scheduling). */
export function toNumber(v: unknown, src: YamlSource, path: PathSeg[], what: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number') return v;
  const key = String(path[path.length - 1]);
  if (isTemplated(v)) {
    throw parseError(
      `"${key}" must be a number in ${what}; templates are not supported here`,
      src.pos(path),
      'write the number',
    );
  }
  const n = Number(v);
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(n)) return n;
  throw parseError(`"${key}" must be a number in ${what}, got ${JSON.stringify(v)}`, src.pos(path));
}

export function keyPositions(src: YamlSource, path: PathSeg[], value: Record<string, unknown>) {
  const out: Record<string, ReturnType<YamlSource['pos']>> = {};
  for (const k of Object.keys(value)) out[k] = src.keyPos([...path, k]);
  return out;
}
