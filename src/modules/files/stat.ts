// stat: facts about a path on the target (never changes anything).
import { Type } from '../../schema/type-builder.js';
import { defineModule } from '../../module-api/types.js';
import { formatMode } from './file-mode.js';
import { remotePathInfo } from './remote-path.js';

const args = Type.Object(
  {
    path: Type.String({ description: 'Path on the target.' }),
    follow: Type.Optional(Type.Boolean({ default: false, description: 'Follow a symlink to what it points to.' })),
    get_checksum: Type.Optional(Type.Boolean({ default: true, description: 'Compute the sha256 of a regular file.' })),
  },
  { additionalProperties: false },
);

export const statModule = defineModule({
  name: 'stat',
  summary: 'Report whether a path exists on the target, its type, mode, owner, size and checksum',
  runsOn: 'target',
  args,
  checkMode: true,
  changesNode: false,
  idempotent: true,
  freeForm: 'path',
  example: `- name: Is the image already there?
  stat:
    path: /var/lib/images/disk.raw
  register: img`,
  async run(ctx, a) {
    const i = await remotePathInfo(ctx, a.path, { checksum: a.get_checksum !== false, follow: a.follow === true });
    if (!i.exists) return { changed: false, stat: { exists: false, path: a.path } };
    return {
      changed: false,
      stat: {
        exists: true,
        path: a.path,
        isdir: i.type === 'directory',
        isreg: i.type === 'file',
        islnk: i.type === 'link',
        mode: formatMode(i.mode ?? 0),
        uid: i.uid,
        gid: i.gid,
        pw_name: i.owner,
        gr_name: i.group,
        size: i.size,
        mtime: i.mtime,
        ...(i.target !== undefined ? { lnk_target: i.target } : {}),
        ...(i.checksum !== undefined ? { checksum: i.checksum } : {}),
      },
    };
  },
});
