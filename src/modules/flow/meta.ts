// meta: asks the executor for an action. The module only validates and returns the action
// under `tsbm_meta`; the executor interprets it (it never knows modules by name).
import { Type } from '../../schema/type-builder.js';
import { defineModule } from '../../module-api/types.js';

const META_ACTIONS = ['flush_handlers', 'end_play', 'end_host', 'noop', 'clear_host_errors'] as const;

const args = Type.Object(
  {
    action: Type.Union(
      META_ACTIONS.map((a) => Type.Literal(a)),
      { description: 'flush_handlers: run notified handlers now; end_play / end_host: stop; noop; clear_host_errors' },
    ),
  },
  { additionalProperties: false },
);

export const metaModule = defineModule({
  name: 'meta',
  summary: 'Executor actions: flush_handlers, end_play, end_host, noop, clear_host_errors',
  runsOn: 'controller',
  args,
  checkMode: true,
  changesNode: false,
  idempotent: true,
  counted: false,
  freeForm: 'action',
  example: `- meta: flush_handlers`,
  async run(_ctx, a) {
    return { changed: false, tsbm_meta: a.action, msg: `meta: ${a.action}` };
  },
});
