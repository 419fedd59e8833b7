// shell: run a command line through sh on the target (the only module allowed a raw string).
import { Type } from '../../schema/type-builder.js';
import { defineModule } from '../../module-api/types.js';
import { checkModeResult, commandResult, guardCreatesRemoves } from './command-result.js';

const args = Type.Object(
  {
    cmd: Type.String({ description: 'Shell command line (pipes, redirections, variables allowed).' }),
    creates: Type.Optional(Type.String({ description: 'Skip the command when this path exists.' })),
    removes: Type.Optional(Type.String({ description: 'Run the command only when this path exists.' })),
    chdir: Type.Optional(Type.String({ description: 'Directory to run the command in.' })),
    stdin: Type.Optional(Type.String({ description: 'Text fed to the command on standard input.' })),
    stdin_add_newline: Type.Optional(Type.Boolean({ default: true, description: 'Append a newline to stdin.' })),
  },
  { additionalProperties: false },
);

export const shellModule = defineModule({
  name: 'shell',
  summary: 'Run a command line through sh on the target',
  description:
    'Runs `sh -c CMD` on the target. Prefer `command` when no shell features are needed: its arguments cannot be misinterpreted. Registers rc, stdout, stderr and their _lines.',
  runsOn: 'target',
  args,
  checkMode: true,
  freeForm: 'cmd',
  example: `- name: Count block devices
  shell: lsblk -d -n | wc -l
  register: ndisks`,
  async run(ctx, a) {
    const skip = await guardCreatesRemoves(ctx, a);
    if (skip) return skip;
    if (ctx.check) return checkModeResult('shell command', a);
    const stdin = a.stdin === undefined ? undefined : a.stdin + (a.stdin_add_newline === false ? '' : '\n');
    const start = Date.now();
    const r = await ctx.execShell(a.cmd, {
      ...(a.chdir !== undefined ? { cwd: a.chdir } : {}),
      ...(stdin !== undefined ? { stdin } : {}),
    });
    return commandResult(r, a.cmd, start);
  },
});
