// file: make a path on the target a directory, an (existing) file, touched, or absent.
import { Type } from '../../schema/type-builder.js';
import { TsbmError } from '../../errors.js';
import { groupArg, modeArg, ownerArg } from './file-args.js';
import type { RemotePathInfo } from './remote-path.js';
import { defineModule, type ModuleContext } from '../../module-api/types.js';
import { formatMode, parseMode } from './file-mode.js';
import { remotePathInfo } from './remote-path.js';

const args = Type.Object(
  {
    path: Type.String({ description: 'Path on the target.' }),
    state: Type.Optional(
      Type.Union([Type.Literal('file'), Type.Literal('directory'), Type.Literal('absent'), Type.Literal('touch')], {
        default: 'file',
        description:
          'directory: create (with parents); absent: remove (recursively); touch: create or update the time; file: must exist, fix mode/owner.',
      }),
    ),
    mode: modeArg,
    owner: ownerArg,
    group: groupArg,
  },
  { additionalProperties: false },
);

async function must(ctx: ModuleContext, argv: string[]): Promise<void> {
  const r = await ctx.exec(argv);
  if (r.rc !== 0) {
    throw new TsbmError('runtime', `${argv.join(' ')} failed on ${ctx.host}: ${r.stderr.trim() || `rc ${r.rc}`}`, {
      host: ctx.host,
      task: ctx.task,
      hint: 'check the path and permissions (become: true for system paths)',
    });
  }
}

function attrsDiffer(i: RemotePathInfo, mode: number | undefined, owner?: string, group?: string): { mode: boolean; owner: boolean } {
  return {
    mode: mode !== undefined && (i.mode === undefined || (i.mode & 0o7777) !== mode),
    owner:
      (owner !== undefined && owner !== i.owner && owner !== String(i.uid)) ||
      (group !== undefined && group !== i.group && group !== String(i.gid)),
  };
}

export const fileModule = defineModule({
  name: 'file',
  summary: 'Create directories, touch or remove files, set mode and owner on the target',
  runsOn: 'target',
  args,
  checkMode: true,
  idempotent: true,
  example: `- name: Work directory
  file:
    path: /var/lib/tsbm
    state: directory
    mode: '0700'`,
  async run(ctx, a) {
    const state = a.state ?? 'file';
    const mode = parseMode(a.mode);
    const p = a.path;
    const before = await remotePathInfo(ctx, p);
    const result = (changed: boolean, extra: Record<string, unknown> = {}) => ({
      changed,
      path: p,
      state,
      ...(mode !== undefined ? { mode: formatMode(mode) } : {}),
      ...extra,
    });

    if (state === 'absent') {
      if (!before.exists) return result(false);
      if (!ctx.check) await must(ctx, ['rm', '-rf', '--', p]);
      return result(true, ctx.diff ? { diff: { before: `${before.type} ${p}\n`, after: '', path: p } } : {});
    }

    let created = false;
    if (state === 'directory') {
      if (before.exists && before.type !== 'directory') {
        throw new TsbmError('runtime', `${p} on ${ctx.host} exists and is not a directory`, {
          host: ctx.host,
          task: ctx.task,
          hint: 'remove it first (state: absent) or choose another path',
        });
      }
      if (!before.exists) {
        created = true;
        if (!ctx.check) await must(ctx, ['mkdir', '-p', '--', p]);
      }
    } else if (state === 'touch') {
      created = true; // like Ansible: touching always updates the times
      if (!ctx.check) await must(ctx, ['touch', '--', p]);
    } else if (!before.exists) {
      throw new TsbmError('runtime', `file ${p} does not exist on ${ctx.host}`, {
        host: ctx.host,
        task: ctx.task,
        hint: 'use state: touch to create an empty file, or copy to create one with content',
      });
    }

    if (ctx.check && !before.exists) return result(true);
    const now = before.exists && !created ? before : await remotePathInfo(ctx, p);
    const d = attrsDiffer(now, mode, a.owner, a.group);
    if (d.mode && !ctx.check) await must(ctx, ['chmod', formatMode(mode as number), '--', p]);
    if (d.owner && !ctx.check) {
      await must(ctx, ['chown', a.group !== undefined ? `${a.owner ?? ''}:${a.group}` : (a.owner as string), '--', p]);
    }
    return result(created || d.mode || d.owner);
  },
});
