// SFTP subsystem of the in-process SSH server, served from the real file system under `root`.
import type { Stats } from 'node:fs';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Attributes, SFTPWrapper } from 'ssh2';
import { utils } from 'tsbm/lib/connection/ssh2-lib.js';

const { STATUS_CODE, OPEN_MODE } = utils.sftp;

type Handle = { kind: 'file'; fd: fs.FileHandle } | { kind: 'dir'; dir: string; done: boolean };

export interface SftpFsOptions {
  /** Directory that `/` maps to (default '/'). */
  root: string;
  /** Directory relative paths resolve against, as seen by the client (default '/'). */
  home: string;
}

function toAttrs(st: Stats): Attributes {
  return {
    mode: st.mode,
    uid: st.uid,
    gid: st.gid,
    size: st.size,
    atime: Math.floor(st.atimeMs / 1000),
    mtime: Math.floor(st.mtimeMs / 1000),
  };
}

function statusFor(err: unknown): number {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return STATUS_CODE.NO_SUCH_FILE;
  if (code === 'EACCES' || code === 'EPERM') return STATUS_CODE.PERMISSION_DENIED;
  return STATUS_CODE.FAILURE;
}

function openFlags(flags: number): string {
  const rw = (flags & OPEN_MODE.READ) !== 0 && (flags & OPEN_MODE.WRITE) !== 0;
  if (flags & OPEN_MODE.WRITE) {
    const x = flags & OPEN_MODE.EXCL ? 'x' : '';
    if (flags & OPEN_MODE.APPEND) return `a${x}${rw ? '+' : ''}`;
    if (flags & OPEN_MODE.TRUNC) return `w${x}${rw ? '+' : ''}`;
    // Write without truncation: create if asked, else the file must exist.
    return flags & OPEN_MODE.CREAT ? `${rw ? 'w+' : 'w'}` : 'r+';
  }
  return 'r';
}

function longname(name: string, st: Stats): string {
  const type = st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : '-';
  const perms = (st.mode & 0o777).toString(8).padStart(4, '0');
  return `${type}${perms} ${st.uid} ${st.gid} ${st.size} ${name}`;
}

async function applyAttrs(target: string | fs.FileHandle, attrs: Attributes): Promise<void> {
  const isHandle = typeof target !== 'string';
  if (attrs.mode !== undefined) {
    if (isHandle) await target.chmod(attrs.mode & 0o7777);
    else await fs.chmod(target, attrs.mode & 0o7777);
  }
  if (attrs.uid !== undefined && attrs.gid !== undefined) {
    if (isHandle) await target.chown(attrs.uid, attrs.gid);
    else await fs.chown(target, attrs.uid, attrs.gid);
  }
  if (attrs.size !== undefined) {
    if (isHandle) await target.truncate(attrs.size);
    else await fs.truncate(target, attrs.size);
  }
  if (attrs.atime !== undefined && attrs.mtime !== undefined) {
    if (isHandle) await target.utimes(attrs.atime, attrs.mtime);
    else await fs.utimes(target, attrs.atime, attrs.mtime);
  }
}

/** Wires every request handler of one SFTP session; handles are closed when the session ends. */
export function serveSftp(sftp: SFTPWrapper, opts: SftpFsOptions): void {
  const handles = new Map<number, Handle>();
  let next = 1;
  const real = (p: string) => path.join(opts.root, path.posix.resolve(opts.home, p));
  const newHandle = (h: Handle): Buffer => {
    const id = next++;
    handles.set(id, h);
    const b = Buffer.alloc(4);
    b.writeUInt32BE(id);
    return b;
  };
  const handleOf = (b: Buffer): Handle | undefined => (b.length === 4 ? handles.get(b.readUInt32BE(0)) : undefined);
  const fileOf = (b: Buffer) => {
    const h = handleOf(b);
    return h?.kind === 'file' ? h.fd : undefined;
  };
  // Every request: run, and answer FAILURE-ish status on a thrown fs error. One at a time, in
  // the order received, as OpenSSH's sftp-server does: clients pipeline WRITE, FSETSTAT and
  // CLOSE on a handle and rely on that order.
  let queue: Promise<void> = Promise.resolve();
  const guard = (reqid: number, fn: () => Promise<void>) => {
    queue = queue.then(() => fn().catch((err) => sftp.status(reqid, statusFor(err), (err as Error).message)));
  };

  sftp.on('OPEN', (reqid, filename, flags, attrs) =>
    guard(reqid, async () => {
      const mode = attrs?.mode !== undefined ? attrs.mode & 0o7777 : 0o666;
      const fd = await fs.open(real(filename), openFlags(flags), mode);
      sftp.handle(reqid, newHandle({ kind: 'file', fd }));
    }),
  );
  sftp.on('READ', (reqid, handle, offset, len) =>
    guard(reqid, async () => {
      const fd = fileOf(handle);
      if (!fd) return void sftp.status(reqid, STATUS_CODE.FAILURE, 'bad handle');
      const buf = Buffer.alloc(len);
      const { bytesRead } = await fd.read(buf, 0, len, offset);
      if (bytesRead === 0) sftp.status(reqid, STATUS_CODE.EOF);
      else sftp.data(reqid, buf.subarray(0, bytesRead));
    }),
  );
  sftp.on('WRITE', (reqid, handle, offset, data) =>
    guard(reqid, async () => {
      const fd = fileOf(handle);
      if (!fd) return void sftp.status(reqid, STATUS_CODE.FAILURE, 'bad handle');
      await fd.write(data, 0, data.length, offset);
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );
  sftp.on('FSTAT', (reqid, handle) =>
    guard(reqid, async () => {
      const fd = fileOf(handle);
      if (!fd) return void sftp.status(reqid, STATUS_CODE.FAILURE, 'bad handle');
      sftp.attrs(reqid, toAttrs(await fd.stat()));
    }),
  );
  sftp.on('FSETSTAT', (reqid, handle, attrs) =>
    guard(reqid, async () => {
      const fd = fileOf(handle);
      if (!fd) return void sftp.status(reqid, STATUS_CODE.FAILURE, 'bad handle');
      await applyAttrs(fd, attrs);
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );
  sftp.on('CLOSE', (reqid, handle) =>
    guard(reqid, async () => {
      const h = handleOf(handle);
      if (!h) return void sftp.status(reqid, STATUS_CODE.FAILURE, 'bad handle');
      handles.delete(handle.readUInt32BE(0));
      if (h.kind === 'file') await h.fd.close();
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );
  sftp.on('OPENDIR', (reqid, p) =>
    guard(reqid, async () => {
      const dir = real(p);
      const st = await fs.stat(dir);
      if (!st.isDirectory()) return void sftp.status(reqid, STATUS_CODE.FAILURE, 'not a directory');
      sftp.handle(reqid, newHandle({ kind: 'dir', dir, done: false }));
    }),
  );
  sftp.on('READDIR', (reqid, handle) =>
    guard(reqid, async () => {
      const h = handleOf(handle);
      if (h?.kind !== 'dir') return void sftp.status(reqid, STATUS_CODE.FAILURE, 'bad handle');
      if (h.done) return void sftp.status(reqid, STATUS_CODE.EOF);
      h.done = true;
      const names = await fs.readdir(h.dir);
      const entries = [];
      for (const name of ['.', '..', ...names]) {
        const st = await fs.lstat(path.join(h.dir, name)).catch(() => undefined);
        if (st) entries.push({ filename: name, longname: longname(name, st), attrs: toAttrs(st) });
      }
      sftp.name(reqid, entries);
    }),
  );
  sftp.on('STAT', (reqid, p) => guard(reqid, async () => void sftp.attrs(reqid, toAttrs(await fs.stat(real(p))))));
  sftp.on('LSTAT', (reqid, p) => guard(reqid, async () => void sftp.attrs(reqid, toAttrs(await fs.lstat(real(p))))));
  sftp.on('SETSTAT', (reqid, p, attrs) =>
    guard(reqid, async () => {
      await applyAttrs(real(p), attrs);
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );
  sftp.on('MKDIR', (reqid, p, attrs) =>
    guard(reqid, async () => {
      await fs.mkdir(real(p), attrs?.mode !== undefined ? attrs.mode & 0o7777 : 0o777);
      sftp.status(reqid, STATUS_CODE.OK);
    }),
  );
  const simple = (fn: (...a: string[]) => Promise<unknown>) => (reqid: number, ...a: string[]) =>
    guard(reqid, async () => {
      await fn(...a.map(real));
      sftp.status(reqid, STATUS_CODE.OK);
    });
  sftp.on('RMDIR', simple((p) => fs.rmdir(p as string)));
  sftp.on('REMOVE', simple((p) => fs.unlink(p as string)));
  // POSIX rename semantics (replace the target), like OpenSSH's posix-rename extension.
  sftp.on('RENAME', simple((a, b) => fs.rename(a as string, b as string)));
  sftp.on('READLINK', (reqid, p) =>
    guard(reqid, async () => {
      const target = await fs.readlink(real(p));
      sftp.name(reqid, [{ filename: target, longname: target, attrs: {} as Attributes }]);
    }),
  );
  sftp.on('REALPATH', (reqid, p) =>
    guard(reqid, async () => {
      const abs = path.posix.resolve(opts.home, p);
      sftp.name(reqid, [{ filename: abs, longname: abs, attrs: {} as Attributes }]);
    }),
  );
  sftp.on('close', () => {
    for (const h of handles.values()) if (h.kind === 'file') void h.fd.close().catch(() => {});
    handles.clear();
  });
}
