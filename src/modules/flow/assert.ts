// assert: every condition in `that` must hold (same expression syntax as `when`).
import { Type } from '../../schema/type-builder.js';
import { defineModule } from '../../module-api/types.js';
import { evalCondition } from '../../template/index.js';

const cond = Type.Union([Type.String(), Type.Boolean()]);
const args = Type.Object(
  {
    that: Type.Union([cond, Type.Array(cond, { minItems: 1 })], {
      description: 'Condition(s), like `when`: "eq disk_count 2" or "{{ ... }}"',
    }),
    fail_msg: Type.Optional(Type.String({ description: 'Message when a condition is false' })),
    msg: Type.Optional(Type.String({ description: 'Alias of fail_msg' })),
    success_msg: Type.Optional(Type.String({ description: 'Message when all hold', default: 'All assertions passed' })),
    quiet: Type.Optional(Type.Boolean({ description: 'Accepted for Ansible compatibility' })),
  },
  { additionalProperties: false },
);

export const assertModule = defineModule({
  name: 'assert',
  summary: 'Fail unless the given conditions hold',
  runsOn: 'controller',
  args,
  checkMode: true,
  changesNode: false,
  idempotent: true,
  example: `- name: The BMC is the expected vendor
  assert:
    that:
      - "eq bmc.vendor 'Dell'"
      - defined instance_info.image_source
    fail_msg: wrong node`,
  async run(ctx, a) {
    const list = Array.isArray(a.that) ? a.that : [a.that];
    for (const c of list) {
      const ok = evalCondition(c, {
        vars: ctx.vars,
        host: ctx.host,
        task: ctx.task,
        baseDir: ctx.services.playbookDir,
      });
      if (!ok) {
        return {
          changed: false,
          failed: true,
          assertion: c,
          evaluated_to: false,
          msg: a.fail_msg ?? a.msg ?? `Assertion failed: ${String(c)}`,
        };
      }
    }
    return { changed: false, msg: a.success_msg ?? 'All assertions passed' };
  },
});
