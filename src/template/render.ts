// Rendering values: strings through the template engine, containers deeply, `!unsafe` text as
// the string it holds (never rendered), everything else untouched. A value that is one `{{ expression }}` keeps the expression's type.
import { UnsafeText } from '../util/unsafe-text.js';
import { setOwn } from '../util/own-property.js';
import { compileTemplate } from './engine.js';
import { toTemplateError } from './errors.js';
import type { TemplateContext } from './types.js';

export function renderString(s: string, ctx: TemplateContext): unknown {
  if (!s.includes('{{')) return s; // fast path: most values are plain
  try {
    const r = compileTemplate(s, 'typed').run(ctx.vars, ctx);
    return r.typed && typeof r.value !== 'string' ? r.value : r.text;
  } catch (e) {
    throw toTemplateError(e, ctx);
  }
}

/** Render to text even when the template is one expression (for messages, file contents). */
export function renderText(s: string, ctx: TemplateContext): string {
  if (!s.includes('{{')) return s;
  try {
    return compileTemplate(s, 'string').run(ctx.vars, ctx).text;
  } catch (e) {
    throw toTemplateError(e, ctx);
  }
}

export function renderValue(value: unknown, ctx: TemplateContext, depth = 0): unknown {
  if (typeof value === 'string') return renderString(value, ctx);
  if (value instanceof UnsafeText) return value.text; // data (`!unsafe`): never rendered
  if (depth > 100 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => renderValue(v, ctx, depth + 1));
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null)
    return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) setOwn(out, k, renderValue(v, ctx, depth + 1));
  return out;
}
