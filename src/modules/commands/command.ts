// command: run a program on the target without a shell (argv, or a string split like sh words).
import { Type } from '../../schema/type-builder.js';
import { TsbmError } from '../../errors.js';
import { defineModule } from '../../module-api/types.js';
import { checkModeResult, commandResult, guardCreatesRemoves } from './command-result.js';
import { splitArgs } from './split-args.js';

const args = Type.Object(
  {
    cmd: Type.Optional(
      Type.String({ description: 'The command line, split into words like sh would (no pipes, variables or globs).' }),
    ),
    argv: Type.Optional(Type.Array(Type.String(), { minItems: 1, description: 'The program and its arguments, passed as is.' })),
    creates: Type.Optional(Type.String({ description: 'Skip the command when this path exists.' })),
    removes: Type.Optional(Type.String({ description: 'Run the command only when this path exists.' })),
    chdir: Type.Optional(Type.String({ description: 'Directory to run the command in.' })),
    stdin: Type.Optional(Type.String({ description: 'Text fed to the command on standard input.' })),
    stdin_add_newline: Type.Optional(Type.Boolean({ default: true, description: 'Append a newline to stdin.' })),
  },
  { additionalProperties: false },
);

export const commandModule = defineModule({
  name: 'command',
  summary: 'Run a command on the target (no shell)',
  description:
    'Runs a program with arguments on the target. Nothing is interpreted by a shell: use `shell` for pipes, redirections and variables. Registers rc, stdout, stderr, stdout_lines and stderr_lines; a non-zero rc fails the task.',
  runsOn: 'target',
  args,
  checkMode: true,
  freeForm: 'cmd',
  example: `- name: List the disks
  command: lsblk -J -b
  register: disks

- name: Run with exact arguments
  command:
    argv: [podman, image, exists, "{{ image }}"]
    creates: /var/lib/done`,
  async run(ctx, a) {
    if ((a.cmd === undefined) === (a.argv === undefined)) {
      throw new TsbmError('runtime', 'command needs exactly one of cmd (or the free-form string) and argv', {
        host: ctx.host,
        task: ctx.task,
        hint: 'write `command: prog args` or give `argv: [prog, arg]`',
      });
    }
    const argv = a.argv ?? splitArgs(a.cmd as string);
    if (argv.length === 0) throw new TsbmError('runtime', 'command is empty', { host: ctx.host, task: ctx.task });
    const skip = await guardCreatesRemoves(ctx, a);
    if (skip) return skip;
    if (ctx.check) return checkModeResult('command', a);
    const stdin = a.stdin === undefined ? undefined : a.stdin + (a.stdin_add_newline === false ? '' : '\n');
    const start = Date.now();
    const r = await ctx.exec(argv, {
      ...(a.chdir !== undefined ? { cwd: a.chdir } : {}),
      ...(stdin !== undefined ? { stdin } : {}),
    });
    return commandResult(r, argv, start);
  },
});
