// Conditions for when/until/failed_when/changed_when: a template with braces, or a bare
// expression without them (`eq power_state 'On'`, `bootc_tpm2_luks`, `not (defined foo)`).
import { compileTemplate } from './engine.js';
import { TsbmError } from '../errors.js';
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
  let r: ReturnType<ReturnType<typeof compileTemplate>['run']>;
  try {
    r = compileTemplate(conditionSource(expr.trim()), 'typed').run(ctx.vars, ctx);
  } catch (e) {
    throw toTemplateError(e, ctx, true);
  }
  // `"{{ x }} == 'y'"` would render to a non-empty string and always be true: refuse it.
  if (!r.typed) throw mixedCondition(expr, ctx);
  return truthy(r.value);
}

function mixedCondition(expr: string, ctx: TemplateContext): TsbmError {
  return new TsbmError(
    'template',
    `condition "${expr}" mixes {{ }} with other text, so it would always be true`,
    {
      ...(ctx.pos ? { pos: ctx.pos } : {}),
      ...(ctx.task ? { task: ctx.task } : {}),
      ...(ctx.host ? { host: ctx.host } : {}),
      hint: 'write the whole condition as one expression, without braces: eq x "y"',
    },
  );
}
