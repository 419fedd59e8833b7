// Files over one connection's SFTP session: a put writes a temporary name and renames it
// (readers never see a partial file), a get reads at most the cap; both fail as unreachable
// when the session or the connection goes under them.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { SFTPWrapper } from 'ssh2';
import { TsbmError, UnreachableError } from '../errors.js';
import { sftpReadCapped } from './get-cap.js';
import { type Inflight, LOST_HINT } from './ssh-link.js';
import type { Client } from './ssh2-lib.js';
import { SFTP_UNAVAILABLE_HINT } from './transfer-choice.js';
import { tempNameFor } from './transfer-piped.js';

/** One connection's SFTP session and what its transfers need to know. */
export interface SftpSession {
  sftp: SFTPWrapper;
  host: string;
  inflight: Inflight;
}

/** SFTP sessions whose channel has closed (their pending requests may never be answered). */
const closedSftp = new WeakSet<SFTPWrapper>();

/**
 * Starts SFTP on `client`; `forget` runs when the session fails to start or closes (the next
 * transfer starts another). `lost` says whether the connection went meanwhile.
 */
export function openSftp(client: Client, host: string, lost: () => Promise<boolean>, forget: () => void): Promise<SFTPWrapper> {
  return new Promise<SFTPWrapper>((resolve, reject) =>
    client.sftp((e, s) => {
      if (e) {
        forget();
        // A connection dropping under the request shows as "No response from server", or as
        // "Unable to start subsystem" when the channel closed first: ask the connection.
        void lost().then((gone) => {
          const dropped = gone || /no response from server/i.test(e.message);
          const why = dropped ? `the connection was lost (${e.message})` : e.message;
          // A dropped connection is unreachable, as for exec: idempotent tasks reconnect and retry.
          reject(
            dropped
              ? new UnreachableError(host, `cannot start SFTP on ${host}: ${why}`, undefined, LOST_HINT)
              : new TsbmError('runtime', `cannot start SFTP on ${host}: ${why}`, { host, hint: SFTP_UNAVAILABLE_HINT }),
          );
        });
        return;
      }
      s.on('close', () => {
        forget();
        closedSftp.add(s);
      });
      resolve(s);
    }),
  );
}

/**
 * `work` on an SFTP session, failed as unreachable when the session or the connection goes:
 * ssh2 leaves some SFTP requests pending forever when the channel closes under them.
 */
function whileConnected<T>(s: SftpSession, work: Promise<T>): Promise<T> {
  const { sftp, host, inflight } = s;
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const settle = (fn: () => void) => {
      if (done) return;
      done = true;
      inflight.delete(onLost);
      sftp.off('close', onClose);
      fn();
    };
    const onLost = (e: Error) => settle(() => reject(e));
    const onClose = () => onLost(new UnreachableError(host, `connection to ${host} was lost during a file transfer`, undefined, LOST_HINT));
    inflight.add(onLost);
    sftp.once('close', onClose);
    if (closedSftp.has(sftp)) onClose();
    work.then(
      (v) => settle(() => resolve(v)),
      (e: unknown) => settle(() => reject(e)),
    );
  });
}

/** Writes `data` to `dest` with `mode`: a temporary name in the same directory, then a rename. */
export async function sftpPut(s: SftpSession, data: Buffer | string | Readable, dest: string, mode: number): Promise<void> {
  const { sftp, host } = s;
  const tmp = tempNameFor(dest);
  const fail = (what: string, e: Error) =>
    new TsbmError('runtime', `cannot ${what} ${dest} on ${host}: ${e.message}`, {
      host,
      hint: 'check that the directory exists and the SSH user may write there',
    });
  try {
    await whileConnected(s, writeThenRename(sftp, data, tmp, dest, mode, fail));
  } catch (e) {
    if (e instanceof UnreachableError) throw e; // nothing to clean up over a dead connection
    await whileConnected(s, sftpCall<void>((cb) => sftp.unlink(tmp, cb))).catch(() => {});
    if (e instanceof TsbmError) throw e;
    throw fail('write', e as Error);
  }
}

async function writeThenRename(
  sftp: SFTPWrapper,
  data: Buffer | string | Readable,
  tmp: string,
  dest: string,
  mode: number,
  fail: (what: string, e: Error) => TsbmError,
): Promise<void> {
  const small = typeof data === 'string' || (Buffer.isBuffer(data) && data.length <= SMALL_PUT_BYTES);
  if (small) await writeSmall(sftp, tmp, Buffer.from(data as string | Buffer), mode, fail);
  else {
    const src = Buffer.isBuffer(data) ? Readable.from([data]) : (data as Readable);
    await pipeline(src, sftp.createWriteStream(tmp, { mode, flags: 'w' }));
    await sftpCall<void>((cb) => sftp.chmod(tmp, mode, cb)).catch((e: Error) => {
      throw fail('set the mode of', e);
    });
  }
  await rename(sftp, tmp, dest);
}

async function rename(sftp: SFTPWrapper, from: string, to: string): Promise<void> {
  try {
    // OpenSSH: atomic replace via the posix-rename extension.
    await sftpCall<void>((cb) => sftp.ext_openssh_rename(from, to, cb));
    return;
  } catch {
    // not supported: plain RENAME (which may refuse an existing target)
  }
  try {
    await sftpCall<void>((cb) => sftp.rename(from, to, cb));
  } catch {
    await sftpCall<void>((cb) => sftp.unlink(to, cb)).catch(() => {});
    await sftpCall<void>((cb) => sftp.rename(from, to, cb));
  }
}

/** Reads `file`, at most `maxBytes`. */
export async function sftpGet(s: SftpSession, file: string, maxBytes: number): Promise<Buffer> {
  const { host } = s;
  try {
    return await whileConnected(s, sftpReadCapped(s.sftp, host, file, maxBytes));
  } catch (e) {
    if (e instanceof TsbmError) throw e;
    const code = (e as { code?: number }).code;
    throw new TsbmError('runtime', `cannot read ${file} on ${host}: ${code === 2 ? 'no such file' : (e as Error).message}`, {
      host,
      hint: code === 2 ? 'check the path' : 'check that the SSH user may read the file',
    });
  }
}

function sftpCall<T>(fn: (cb: (err: Error | null | undefined, v?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    try {
      fn((err, v) => (err ? reject(err) : resolve(v as T)));
    } catch (e) {
      reject(e);
    }
  });
}

/** Files up to this size are written with pipelined SFTP requests (see writeSmall). */
const SMALL_PUT_BYTES = 1024 * 1024;
// Under every server's write limit (ssh2 splits a larger WRITE and sends the rest only after
// the first is answered, which would put it behind our CLOSE).
const SFTP_CHUNK = 16 * 1024;

/**
 * Opens, then sends every WRITE, the mode (FSETSTAT: the open's mode is cut by the umask) and
 * the CLOSE without waiting between them: two round trips instead of one per request. An SFTP
 * server answers requests on one handle in order (OpenSSH's sftp-server runs them one by one).
 */
async function writeSmall(
  sftp: SFTPWrapper,
  file: string,
  data: Buffer,
  mode: number,
  fail: (what: string, e: Error) => TsbmError,
): Promise<void> {
  const handle = await sftpCall<Buffer>((cb) => sftp.open(file, 'w', { mode }, cb));
  const writes: Promise<void>[] = [];
  for (let off = 0; off < data.length; off += SFTP_CHUNK) {
    const len = Math.min(SFTP_CHUNK, data.length - off);
    writes.push(sftpCall<void>((cb) => sftp.write(handle, data, off, len, off, cb)));
  }
  const chmod = sftpCall<void>((cb) => sftp.fchmod(handle, mode, cb));
  const close = sftpCall<void>((cb) => sftp.close(handle, cb));
  // Every answer is awaited (none left unhandled); the first failure in request order is reported.
  const settled = await Promise.allSettled([...writes, chmod, close]);
  const i = settled.findIndex((r) => r.status === 'rejected');
  if (i < 0) return;
  const reason = (settled[i] as PromiseRejectedResult).reason as Error;
  throw i === writes.length ? fail('set the mode of', reason) : reason;
}
