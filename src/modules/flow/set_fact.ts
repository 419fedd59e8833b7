// set_fact: sets host variables for the rest of the run (above play/task vars, below extra
// vars). Returned under `tsbm_set_vars`, which the executor turns into host variables.
import { Type } from '../../schema/type-builder.js';
import { defineModule } from '../../module-api/types.js';

const args = Type.Object(
  {
    cacheable: Type.Optional(Type.Boolean({ description: 'Accepted for Ansible compatibility; ignored (tsbm has no fact cache)' })),
  },
  {
    additionalProperties: true,
    minProperties: 1,
    description: 'Each key becomes a host variable with the (rendered) value',
  },
);

export const setFactModule = defineModule({
  name: 'set_fact',
  summary: 'Set host variables for the rest of the run',
  runsOn: 'controller',
  args,
  checkMode: true,
  changesNode: false,
  idempotent: true,
  example: `- name: Remember the disk
  set_fact:
    root_disk_path: "{{ root_disk.device }}"`,
  async run(_ctx, a) {
    const { cacheable: _ignored, ...facts } = a as Record<string, unknown>;
    const bad = Object.keys(facts).find((k) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(k));
    if (bad !== undefined) return { changed: false, failed: true, msg: `set_fact: '${bad}' is not a valid variable name` };
    return { changed: false, tsbm_set_vars: facts };
  },
});
