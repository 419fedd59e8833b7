// File transfer under `become`: SFTP runs as the login user, so privileged writes and reads go
// through a command run with sudo instead. Content travels on stdin/stdout, never in argv.
import type { Readable } from 'node:stream';
import { TsbmError } from '../errors.js';
import type { ExecOptions, ExecResult } from './types.js';

type Exec = (argv: readonly string[], opts?: ExecOptions) => Promise<ExecResult>;

// umask 077 until the final chmod: nobody else can read the temp file, even briefly.
const PUT_SCRIPT = `umask 077; t="$1.tsbm-$$"
if cat > "$t" && chmod "$2" "$t" && mv -f -- "$t" "$1"; then exit 0; fi
rm -f -- "$t"; exit 1`;

export async function putWithBecome(
  exec: Exec,
  host: string,
  data: Buffer | string | Readable,
  dest: string,
  mode: number,
  become: { user?: string },
): Promise<void> {
  const r = await exec(['sh', '-c', PUT_SCRIPT, 'sh', dest, (mode & 0o7777).toString(8)], { stdin: data, become });
  if (r.rc !== 0) {
    throw new TsbmError('runtime', `cannot write ${dest} on ${host} as ${become.user ?? 'root'}: ${r.stderr.trim() || `rc ${r.rc}`}`, {
      host,
      hint: 'check that the directory exists and that sudo -n works for the SSH user',
    });
  }
}

export async function getWithBecome(exec: Exec, host: string, file: string, become: { user?: string }): Promise<Buffer> {
  const r = await exec(['base64', '--', file], { become });
  if (r.rc !== 0) {
    throw new TsbmError('runtime', `cannot read ${file} on ${host} as ${become.user ?? 'root'}: ${r.stderr.trim() || `rc ${r.rc}`}`, {
      host,
      hint: 'check the path and that sudo -n works for the SSH user',
    });
  }
  return Buffer.from(r.stdout.replace(/\s+/g, ''), 'base64');
}
