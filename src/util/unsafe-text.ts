// Text that is data, never a template. An inventory value tagged `!unsafe` (Ansible's tag, which
// `tsbm inventory import --from-ironic` writes for imported values) loads as an UnsafeText: the
// template engine hands it out as the string it holds and never renders it, so no value can undo
// its own protection the way an escape (`\{{`) can be undone by a value holding `\{{` already.
// Host names that hold `{{` reach templates the same way (inventory_hostname, groups, ...).

import { setOwn } from './own-property.js';

export class UnsafeText {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
  toJSON(): string {
    return this.text;
  }
}

/** Strings holding `{{` wrapped as UnsafeText, through arrays and plain objects: for data that is never a template. */
export function asData<T>(v: T, depth = 0): T {
  if (typeof v === 'string') return (v.includes('{{') ? new UnsafeText(v) : v) as T;
  if (depth > 64 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => asData(x, depth + 1)) as T;
  if (Object.getPrototypeOf(v) !== Object.prototype) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) setOwn(out, k, asData(x, depth + 1));
  return out as T;
}
