// What is at a path on the target, in one remote command: type, mode, owner, size, sha256.
import type { ModuleContext } from '../../module-api/types.js';

export interface RemotePathInfo {
  exists: boolean;
  type?: 'file' | 'directory' | 'link' | 'other';
  mode?: number;
  uid?: number;
  gid?: number;
  owner?: string;
  group?: string;
  size?: number;
  mtime?: number;
  /** sha256 of a regular file's content, when asked for. */
  checksum?: string;
  /** Link target, for symlinks. */
  target?: string;
}

// GNU and busybox stat both understand -c; %F names the type. sha256sum only for regular files.
const SCRIPT = `p=$1; follow=$2; want=$3
if [ "$follow" = 1 ]; then s="stat -L"; else s=stat; fi
if [ ! -e "$p" ] && [ ! -L "$p" ]; then echo absent; exit 0; fi
$s -c '%F|%a|%u|%g|%U|%G|%s|%Y' -- "$p" || exit 2
if [ -L "$p" ]; then readlink -- "$p"; else echo; fi
if [ "$want" = 1 ] && [ -f "$p" ]; then sha256sum -- "$p" | cut -d' ' -f1; fi`;

function typeOf(f: string): RemotePathInfo['type'] {
  if (f.includes('directory')) return 'directory';
  if (f.includes('symbolic link')) return 'link';
  if (f.includes('regular')) return 'file';
  return 'other';
}

export async function remotePathInfo(
  ctx: Pick<ModuleContext, 'exec'>,
  path: string,
  opts: { checksum?: boolean; follow?: boolean } = {},
): Promise<RemotePathInfo> {
  const r = await ctx.exec(['sh', '-c', SCRIPT, 'sh', path, opts.follow ? '1' : '0', opts.checksum ? '1' : '0']);
  if (r.rc !== 0) throw new Error(`cannot stat ${path}: ${r.stderr.trim() || `rc ${r.rc}`}`);
  const lines = r.stdout.split('\n');
  if (lines[0] === 'absent') return { exists: false };
  const [type = '', mode = '', uid, gid, owner, group, size, mtime] = (lines[0] ?? '').split('|');
  const info: RemotePathInfo = {
    exists: true,
    type: typeOf(type),
    mode: Number.parseInt(mode, 8),
    uid: Number(uid),
    gid: Number(gid),
    ...(owner ? { owner } : {}),
    ...(group ? { group } : {}),
    size: Number(size),
    mtime: Number(mtime),
  };
  if (lines[1]) info.target = lines[1];
  if (lines[2]) info.checksum = lines[2].trim();
  return info;
}
