// Conditions for when/until/failed_when/changed_when: a template with braces, or a bare
// expression without them (`eq power_state 'On'`, `bootc_tpm2_luks`, `not (defined foo)`).
import { compileTemplate } from './engine.js';
import { toTemplateError } from './errors.js';
import { truthy } from './truthy.js';
import type { TemplateContext } from './types.js';

/** The template a condition stands for. */
export function conditionSource(expr: string): string {
  return expr.includes('{{') ? expr : `{{${expr}}}`;
}

export function evalCondition(expr: string | boolean, ctx: TemplateContext): boolean {
  if (typeof expr === 'boolean') return expr;
  if (typeof expr !== 'string') return truthy(expr);
  if (expr.trim() === '') return true;
  try {
    const r = compileTemplate(conditionSource(expr.trim()), 'typed').run(ctx.vars, ctx);
    return truthy(r.typed ? r.value : r.text);
  } catch (e) {
    throw toTemplateError(e, ctx, true);
  }
}
