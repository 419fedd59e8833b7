// fail: stop the host with a message (usually under `when`).
import { Type } from '../../schema/type-builder.js';
import { defineModule } from '../../module-api/types.js';

const args = Type.Object(
  { msg: Type.Optional(Type.String({ description: 'Why', default: 'Failed as requested from task' })) },
  { additionalProperties: false },
);

export const failModule = defineModule({
  name: 'fail',
  summary: 'Fail the host with a message',
  runsOn: 'controller',
  args,
  checkMode: true,
  changesNode: false,
  idempotent: true,
  freeForm: 'msg',
  example: `- name: Refuse unknown vendors
  fail:
    msg: "unsupported BMC vendor {{ bmc.vendor }}"
  when: "not (contains supported_vendors bmc.vendor)"`,
  async run(_ctx, a) {
    return { changed: false, failed: true, msg: a.msg ?? 'Failed as requested from task' };
  },
});
