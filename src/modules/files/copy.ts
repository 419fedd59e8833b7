// copy: put literal content or a controller file on the target, idempotent by sha256.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Type } from '../../schema/type-builder.js';
import { TsbmError } from '../../errors.js';
import { groupArg, modeArg, ownerArg } from './file-args.js';
import { defineModule } from '../../module-api/types.js';
import { findControllerFile } from '../../module-api/controller-file.js';
import { ensureFile } from './ensure-file.js';
import { parseMode } from './file-mode.js';

const args = Type.Object(
  {
    dest: Type.String({ description: 'Path on the target; a directory (or a path ending in /) receives the src file name.' }),
    content: Type.Optional(Type.String({ description: 'Literal content to write (instead of src).' })),
    src: Type.Optional(
      Type.String({ description: "Controller file: absolute, or relative to the role's files/ or the playbook directory." }),
    ),
    mode: modeArg,
    owner: ownerArg,
    group: groupArg,
  },
  { additionalProperties: false },
);

export const copyModule = defineModule({
  name: 'copy',
  summary: 'Copy content or a controller file to the target',
  description:
    'Writes dest only when its sha256 differs (atomically: temp file + rename), then fixes mode and owner. Supports --check and --diff.',
  runsOn: 'target',
  args,
  checkMode: true,
  idempotent: true,
  example: `- name: Install the agent config
  copy:
    src: agent.conf
    dest: /etc/agent/agent.conf
    mode: '0644'`,
  async run(ctx, a) {
    if ((a.content === undefined) === (a.src === undefined)) {
      throw new TsbmError('runtime', 'copy needs exactly one of content and src', {
        host: ctx.host,
        task: ctx.task,
        hint: 'give the text in content, or a controller file in src',
      });
    }
    let content: Buffer;
    let nameIfDir: string | undefined;
    if (a.src !== undefined) {
      const file = findControllerFile(ctx, a.src, 'files');
      content = readFileSync(file);
      nameIfDir = path.basename(file);
    } else content = Buffer.from(a.content as string, 'utf8');
    return ensureFile(ctx, {
      dest: a.dest,
      content,
      ...(nameIfDir ? { nameIfDir } : {}),
      ...(a.mode !== undefined ? { mode: parseMode(a.mode) as number } : {}),
      ...(a.owner !== undefined ? { owner: a.owner } : {}),
      ...(a.group !== undefined ? { group: a.group } : {}),
    });
  },
});
