// Vars whose values are rendered when read, as Ansible does: `a: "{{ b }}"` reads as b's
// value wherever `a` is used (templates, module ctx.vars). A self-reference is an error, not
// a hang.
import { TsbmError } from '../errors.js';
import { HelperFail } from '../template/fail.js';
import { renderValue } from '../template/index.js';
import type { TemplateContext } from '../template/types.js';
import type { Vars } from '../types.js';
import { UnsafeText } from '../util/unsafe-text.js';

const hasTemplate = (v: unknown, depth = 0): boolean => {
  if (typeof v === 'string') return v.includes('{{');
  if (v instanceof UnsafeText) return true; // rendering unwraps it to its text, unrendered
  if (depth > 20 || v === null || typeof v !== 'object') return false;
  if (Object.getPrototypeOf(v) !== Object.prototype && !Array.isArray(v)) return false;
  return Object.values(v).some((x) => hasTemplate(x, depth + 1));
};

/** A helper that failed (an unset environment variable, a missing file): rendering later will not help. */
function isHelperFailure(e: unknown): boolean {
  return e instanceof TsbmError && e.cause instanceof HelperFail;
}

/**
 * `lenient`: a value that fails to render reads as its raw text instead of throwing (for
 * modules that scan all vars; templates want the error naming the undefined variable). Not
 * when a helper failed (`env` of an unset variable, say): the raw text would reach a module as
 * data, a BMC password of `{{ env "BMC_PASSWORD" }}`. Reading such a variable throws the
 * helper's error; a scan (Object.values, keys, entries) passes over it.
 */
export function lazyVars(raw: Vars, where: Omit<TemplateContext, 'vars'>, opts: { lenient?: boolean } = {}): Vars {
  const done = new Map<string, unknown>();
  const failed = new Map<string, unknown>();
  const busy = new Set<string>();
  let self: Vars;
  const read = (k: string): unknown => {
    if (done.has(k)) return done.get(k);
    if (failed.has(k)) throw failed.get(k);
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
      if (isHelperFailure(e)) {
        failed.set(k, e);
        throw e;
      }
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
    getOwnPropertyDescriptor: (_t, p) => {
      if (!own(p)) return undefined;
      try {
        return { value: read(p), enumerable: true, configurable: true, writable: false };
      } catch (e) {
        // Scans skip what cannot be rendered; reading it by name still throws.
        if (opts.lenient && isHelperFailure(e)) return { value: undefined, enumerable: false, configurable: true, writable: false };
        throw e;
      }
    },
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
  return self;
}
