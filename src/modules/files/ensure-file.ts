// Makes a remote file hold given bytes, mode and owner, idempotently: compare the remote
// sha256 first, upload only when it differs, fix mode/owner separately. Used by copy and template.
import { createHash } from 'node:crypto';
import path from 'node:path';
import { TsbmError } from '../../errors.js';
import type { ModuleContext, ModuleResult } from '../../module-api/types.js';
import { formatMode } from './file-mode.js';
import { remotePathInfo } from './remote-path.js';

export interface EnsureFileArgs {
  dest: string;
  content: Buffer;
  mode?: number;
  owner?: string;
  group?: string;
  /** Basename to use when dest is a directory (copy's src file name). */
  nameIfDir?: string;
}

const DIFF_LIMIT = 256 * 1024;

function isText(b: Buffer): boolean {
  return b.length <= DIFF_LIMIT && !b.includes(0);
}

export async function ensureFile(ctx: ModuleContext, a: EnsureFileArgs): Promise<ModuleResult> {
  let dest = a.dest;
  let info = await remotePathInfo(ctx, dest, { checksum: true, follow: true });
  if (info.type === 'directory' || dest.endsWith('/')) {
    if (!a.nameIfDir) {
      throw new TsbmError('runtime', `dest ${dest} on ${ctx.host} is a directory`, {
        host: ctx.host,
        task: ctx.task,
        hint: 'give the full file path as dest',
      });
    }
    dest = path.posix.join(dest, a.nameIfDir);
    info = await remotePathInfo(ctx, dest, { checksum: true, follow: true });
  }
  if (info.exists && info.type !== 'file') {
    throw new TsbmError('runtime', `dest ${dest} on ${ctx.host} exists and is not a regular file`, {
      host: ctx.host,
      task: ctx.task,
      hint: 'remove it first or choose another dest',
    });
  }
  const checksum = createHash('sha256').update(a.content).digest('hex');
  const contentChanged = info.checksum !== checksum;
  const mode = a.mode ?? info.mode ?? 0o644;
  const modeChanged = info.mode !== undefined && (info.mode & 0o7777) !== mode;
  const ownerChanged =
    (a.owner !== undefined && a.owner !== info.owner && a.owner !== String(info.uid)) ||
    (a.group !== undefined && a.group !== info.group && a.group !== String(info.gid));
  const changed = contentChanged || modeChanged || ownerChanged;

  const result: ModuleResult = { changed, dest, checksum, size: a.content.length, mode: formatMode(mode) };
  if (ctx.diff && contentChanged) {
    let before = '';
    if (info.exists && (info.size ?? 0) <= DIFF_LIMIT) {
      const old = await ctx.get(dest);
      before = isText(old) ? old.toString('utf8') : '(binary)';
    } else if (info.exists) before = '(too large to show)';
    result.diff = { before, after: isText(a.content) ? a.content.toString('utf8') : '(binary)', path: dest };
  }
  if (ctx.check || !changed) return result;

  if (contentChanged) await ctx.put(a.content, dest, { mode });
  else if (modeChanged) await run(ctx, ['chmod', formatMode(mode), '--', dest]);
  if (ownerChanged) {
    const spec = a.group !== undefined ? `${a.owner ?? ''}:${a.group}` : (a.owner as string);
    await run(ctx, ['chown', spec, '--', dest]);
  }
  return result;
}

async function run(ctx: ModuleContext, argv: string[]): Promise<void> {
  const r = await ctx.exec(argv);
  if (r.rc !== 0) {
    throw new TsbmError('runtime', `${argv[0]} failed on ${ctx.host}: ${r.stderr.trim() || `rc ${r.rc}`}`, {
      host: ctx.host,
      task: ctx.task,
      hint: argv[0] === 'chown' ? 'changing the owner needs root: set become: true' : 'check the path and permissions',
    });
  }
}
