// Vars whose values are rendered when read, as Ansible does: `a: "{{ b }}"` reads as b's
// value wherever `a` is used (templates, module ctx.vars). A self-reference is an error, not
// a hang.
import { TsbmError } from '../errors.js';
import { renderValue } from '../template/index.js';
import type { TemplateContext } from '../template/types.js';
import type { Vars } from '../types.js';

const hasTemplate = (v: unknown, depth = 0): boolean => {
  if (typeof v === 'string') return v.includes('{{');
  if (depth > 20 || v === null || typeof v !== 'object') return false;
  if (Object.getPrototypeOf(v) !== Object.prototype && !Array.isArray(v)) return false;
  return Object.values(v).some((x) => hasTemplate(x, depth + 1));
};

/**
 * `lenient`: a value that fails to render reads as its raw text instead of throwing (for
 * modules that scan all vars; templates want the error naming the undefined variable).
 */
export function lazyVars(raw: Vars, where: Omit<TemplateContext, 'vars'>, opts: { lenient?: boolean } = {}): Vars {
  const done = new Map<string, unknown>();
  const busy = new Set<string>();
  let self: Vars;
  const read = (k: string): unknown => {
    if (done.has(k)) return done.get(k);
    const v = raw[k];
    if (k === 'hostvars' || !hasTemplate(v)) return v; // hostvars is a lazy view of its own
    if (busy.has(k)) {
      throw new TsbmError('template', `variable '${k}' refers to itself`, {
        ...(where.pos ? { pos: where.pos } : {}),
        ...(where.host ? { host: where.host } : {}),
        ...(where.task ? { task: where.task } : {}),
        hint: 'a variable cannot be defined in terms of itself',
      });
    }
    busy.add(k);
    try {
      const r = renderValue(v, { ...where, vars: self });
      done.set(k, r);
      return r;
    } catch (e) {
      if (!opts.lenient) throw e;
      done.set(k, v);
      return v;
    } finally {
      busy.delete(k);
    }
  };
  const own = (p: string | symbol): p is string => typeof p === 'string' && Object.hasOwn(raw, p);
  self = new Proxy({} as Vars, {
    get: (_t, p) => (own(p) ? read(p) : undefined),
    has: (_t, p) => own(p),
    ownKeys: () => Reflect.ownKeys(raw).filter((k) => typeof k === 'string'),
    getOwnPropertyDescriptor: (_t, p) =>
      own(p) ? { value: read(p), enumerable: true, configurable: true, writable: false } : undefined,
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
  return self;
}
