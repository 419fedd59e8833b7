// Variable lookup used by every rewritten path expression. Own properties only (no prototype
// access), and a name missing from the current block context falls back to the root vars, so
// `{{#each disks}}{{name}} {{inventory_hostname}}{{/each}}` works as it would in Ansible.
import { UnsafeText } from '../util/unsafe-text.js';
import { UndefinedVarFail } from './fail.js';

const MISSING: unique symbol = Symbol('missing');

function step(obj: unknown, key: string): unknown {
  if (obj === null || obj === undefined) return MISSING;
  if (typeof obj === 'string') {
    if (key === 'length') return obj.length;
    return MISSING;
  }
  if (typeof obj !== 'object') return MISSING;
  if (obj instanceof Map) return obj.has(key) ? obj.get(key) : MISSING;
  return Object.hasOwn(obj, key) ? (obj as Record<string, unknown>)[key] : MISSING;
}

function walk(start: unknown, parts: readonly string[]): { value: unknown; missingAt: number } {
  let cur = start;
  for (let i = 0; i < parts.length; i++) {
    const next = step(cur, parts[i]!);
    if (next === MISSING) return { value: undefined, missingAt: i };
    // `!unsafe` text read raw (hostvars): its string, never rendered.
    cur = next instanceof UnsafeText ? next.text : next;
  }
  return { value: cur, missingAt: -1 };
}

/** Resolve `parts` against the block context, then the root. Throws UndefinedVarFail when `strict`. */
export function resolvePath(
  context: unknown,
  root: unknown,
  original: string,
  parts: readonly string[],
  strict: boolean,
): unknown {
  if (parts.length === 0) return context;
  let r = walk(context, parts);
  // Only fall back to the root when the first segment is absent from the block context.
  if (r.missingAt === 0 && root !== context && root !== undefined) r = walk(root, parts);
  if (r.missingAt < 0) return r.value;
  if (!strict) return undefined;
  throw new UndefinedVarFail(original, parts.slice(0, r.missingAt + 1).join('.'));
}
