// template: render a Handlebars file from the controller with the task's vars, write it like copy.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Type } from '../../schema/type-builder.js';
import { groupArg, modeArg, ownerArg } from './file-args.js';
import { defineModule } from '../../module-api/types.js';
import { findControllerFile } from '../../module-api/controller-file.js';
import { ensureFile } from './ensure-file.js';
import { parseMode } from './file-mode.js';
import { renderText } from '../../template/render.js';

const args = Type.Object(
  {
    src: Type.String({
      description: "Template file on the controller: absolute, or relative to the role's templates/ or the playbook directory.",
    }),
    dest: Type.String({ description: 'Path of the rendered file on the target.' }),
    mode: modeArg,
    owner: ownerArg,
    group: groupArg,
  },
  { additionalProperties: false },
);

export const templateModule = defineModule({
  name: 'template',
  summary: 'Render a template on the controller and write it to the target',
  description:
    "Renders src with the host's variables (Handlebars, strict: an undefined variable is an error) and writes the result like copy: only when the sha256 differs. Supports --check and --diff.",
  runsOn: 'target',
  args,
  checkMode: true,
  idempotent: true,
  example: `- name: Write the network config
  template:
    src: ifcfg.hbs
    dest: /etc/sysconfig/network-scripts/ifcfg-eth0
    mode: '0644'`,
  async run(ctx, a) {
    const file = findControllerFile(ctx, a.src, 'templates');
    const text = renderText(readFileSync(file, 'utf8'), {
      vars: ctx.vars,
      baseDir: path.dirname(file),
      task: ctx.task,
      host: ctx.host,
      pos: { file, line: 1, col: 1 },
      onSecret: (v) => void ctx.secret(v),
    });
    return ensureFile(ctx, {
      dest: a.dest,
      content: Buffer.from(text, 'utf8'),
      ...(a.mode !== undefined ? { mode: parseMode(a.mode) as number } : {}),
      ...(a.owner !== undefined ? { owner: a.owner } : {}),
      ...(a.group !== undefined ? { group: a.group } : {}),
    });
  },
});
