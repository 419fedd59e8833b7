// Walks the raw YAML of loaded model nodes to find every string with its exact position, and
// which of them are conditions (when/until/failed_when/changed_when take bare expressions).
import type { PathSeg, YamlSource } from '../schema/yaml-source.js';
import { sourceOf } from './context.js';
import type { TaskNode } from './model.js';
import { shortName } from './schema.js';

export interface FoundString {
  value: string;
  src: YamlSource;
  path: PathSeg[];
  condition: boolean;
}

const CONDITION_KEYS = new Set(['when', 'until', 'failed_when', 'changed_when', 'any_errors_fatal', 'check_mode']);
/** Child task lists are walked as nodes of their own, not as strings of their parent. */
const CHILD_KEYS = new Set(['block', 'rescue', 'always']);
/** Module arguments that are conditions too (bare expressions, like `when`). */
const CONDITION_ARGS: Record<string, string[]> = { assert: ['that'] };

export function valueAt(root: unknown, path: PathSeg[]): unknown {
  let v = root;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[String(seg)];
  }
  return v;
}

function strings(
  v: unknown,
  src: YamlSource,
  path: PathSeg[],
  condition: boolean,
  out: FoundString[],
  depth = 0,
): void {
  if (depth > 64) return; // hostile nesting: deep enough for anything real
  if (typeof v === 'string') out.push({ value: v, src, path, condition });
  else if (typeof v === 'boolean' && condition) out.push({ value: String(v), src, path, condition });
  else if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) strings(v[i], src, [...path, i], condition, out, depth + 1);
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) strings(x, src, [...path, k], condition, out, depth + 1);
  }
}

/** Every string a node's own keywords and arguments hold (not its child tasks), with positions. */
export function nodeStrings(node: TaskNode | object): FoundString[] {
  const s = sourceOf(node);
  if (!s) return [];
  const raw = valueAt(s.src.value, s.path);
  const out: FoundString[] = [];
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return out;
  for (const [k, v] of Object.entries(raw)) {
    if (CHILD_KEYS.has(k) && 'kind' in node && node.kind === 'block') continue;
    // A role entry's name is not a template; an include's file is checked where it is loaded.
    const condArgs =
      'kind' in node && node.kind === 'task' && shortName(k) === node.module
        ? CONDITION_ARGS[node.module]
        : undefined;
    if (condArgs && v && typeof v === 'object' && !Array.isArray(v)) {
      for (const [a, x] of Object.entries(v)) strings(x, s.src, [...s.path, k, a], condArgs.includes(a), out);
      continue;
    }
    strings(v, s.src, [...s.path, k], CONDITION_KEYS.has(k), out);
  }
  return out;
}

/** Every string in a raw value (e.g. a play's vars) with its position. */
export function templateStrings(v: unknown, src: YamlSource, path: PathSeg[]): FoundString[] {
  const out: FoundString[] = [];
  strings(v, src, path, false, out);
  return out;
}
