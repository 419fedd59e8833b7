// Reading a file from a host within a size cap (tsbm_max_get): the file is the host's to size,
// and a ramdisk is not trusted to keep it small. Over SFTP the size is checked before the first
// read (fstat) and again while reading (files whose size stat does not tell, or that grow).
import type { SFTPWrapper } from 'ssh2';
import { TsbmError } from '../errors.js';
import { DEFAULT_LIMITS, fmtLimit } from '../util/limits.js';
import type { GetOptions } from './types.js';

export function getCap(opts: GetOptions | undefined): number {
  return opts?.maxBytes ?? DEFAULT_LIMITS.getBytes;
}

/** The error for a file over the cap (shared by every way of getting a file). */
export function tooBigToGet(host: string, file: string, cap: number, size?: number): TsbmError {
  return new TsbmError('runtime', `refused to read ${file} on ${host}: it is ${size !== undefined ? `${size} bytes, ` : ''}larger than ${fmtLimit(cap)}`, {
    host,
    hint: 'read a smaller file, or raise tsbm_max_get',
  });
}

const READ_CHUNK = 256 * 1024;

/** The whole file, or tooBigToGet as soon as it is known to pass `cap`. */
export function sftpReadCapped(sftp: SFTPWrapper, host: string, file: string, cap: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    sftp.open(file, 'r', (e, handle) => {
      if (e) return reject(e);
      const done = (err: Error | undefined, data?: Buffer) =>
        sftp.close(handle, () => (err ? reject(err) : resolve(data as Buffer)));
      sftp.fstat(handle, (se, st) => {
        const size = se ? 0 : st.size;
        if (size > cap) return done(tooBigToGet(host, file, cap, size));
        const chunks: Buffer[] = [];
        let total = 0;
        const next = () => {
          const want = Math.min(READ_CHUNK, cap + 1 - total);
          const buf = Buffer.allocUnsafe(want);
          sftp.read(handle, buf, 0, want, total, (re, n) => {
            // ssh2 reports EOF as an error with code 1 (SSH_FX_EOF).
            if (re && (re as { code?: number }).code !== 1) return done(re);
            if (re || n === 0) return done(undefined, Buffer.concat(chunks, total));
            total += n;
            if (total > cap) return done(tooBigToGet(host, file, cap));
            chunks.push(n === want ? buf : buf.subarray(0, n));
            next();
          });
        };
        next();
      });
    });
  });
}
