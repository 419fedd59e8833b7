// debug: show a message or a variable's value in the task's result (the executor's events
// carry it; modules never print).
import { Type } from '../../schema/type-builder.js';
import { defineModule, type ModuleResult } from '../../module-api/types.js';

const args = Type.Object(
  {
    msg: Type.Optional(Type.Unknown({ description: 'Message (any value) to show; default "Hello world!"' })),
    var: Type.Optional(Type.String({ description: 'Name of a variable to show (dotted paths allowed)' })),
    verbosity: Type.Optional(Type.Integer({ minimum: 0, maximum: 3, description: 'Show only at this -v level or above' })),
  },
  { additionalProperties: false },
);

/** Looks a dotted path up in vars, own properties only. */
function lookupVar(vars: Record<string, unknown>, path: string): { found: boolean; value?: unknown } {
  let cur: unknown = vars;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, part)) return { found: false };
    cur = (cur as Record<string, unknown>)[part];
  }
  return { found: true, value: cur };
}

export const debugModule = defineModule({
  name: 'debug',
  summary: 'Show a message or the value of a variable',
  runsOn: 'controller',
  args,
  checkMode: true,
  changesNode: false,
  idempotent: true,
  example: `- name: Show the chosen disk
  debug:
    var: root_disk.device`,
  async run(ctx, a): Promise<ModuleResult> {
    if (a.msg !== undefined && a.var !== undefined) {
      return { changed: false, failed: true, msg: "debug takes either 'msg' or 'var', not both" };
    }
    const level = typeof ctx.vars.tsbm_verbosity === 'number' ? ctx.vars.tsbm_verbosity : 0;
    if (a.verbosity && a.verbosity > level) {
      return { changed: false, skipped: true, msg: `shown only with -${'v'.repeat(a.verbosity)}` };
    }
    const out: ModuleResult = { changed: false };
    if (a.verbosity) out.verbosity = a.verbosity;
    if (a.var !== undefined) {
      const r = lookupVar(ctx.vars, a.var);
      out[a.var] = r.found ? r.value : 'VARIABLE IS NOT DEFINED!';
    } else (out as Record<string, unknown>).msg = a.msg ?? 'Hello world!'; // any type, as in Ansible
    return out;
  },
});
