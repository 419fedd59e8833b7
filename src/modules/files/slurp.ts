// slurp: fetch a file from the target as base64 (over SFTP, or `cat` where the server has none).
import { Type } from '../../schema/type-builder.js';
import { defineModule } from '../../module-api/types.js';

const args = Type.Object(
  { src: Type.String({ description: 'File on the target to read.' }) },
  { additionalProperties: false },
);

export const slurpModule = defineModule({
  name: 'slurp',
  summary: 'Read a file from the target (base64 content)',
  runsOn: 'target',
  args,
  checkMode: true,
  changesNode: false,
  idempotent: true,
  freeForm: 'src',
  example: `- name: Read the machine id
  slurp:
    src: /etc/machine-id
  register: mid`,
  async run(ctx, a) {
    const data = await ctx.get(a.src);
    return { changed: false, content: data.toString('base64'), encoding: 'base64', source: a.src };
  },
});
