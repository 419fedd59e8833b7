// The controller itself as a target: argv spawned without a shell, files via fs.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { TsbmError } from '../errors.js';
import { OverCapError, readCapped } from '../util/read-capped.js';
import { getCap, tooBigToGet } from './get-cap.js';
import { outputBuffers } from './output-cap.js';
import { quoteArgv } from '../util/shell-quote.js';
import { pipedGet, pipedPut } from './transfer-piped.js';
import type { Connection, ExecOptions, ExecResult, GetOptions, PutOptions } from './types.js';

function runLocal(host: string, argv: readonly string[], opts: ExecOptions): Promise<ExecResult> {
  const full = opts.become
    ? ['sudo', '-n', ...(opts.become.user ? ['-u', opts.become.user] : []), '--', ...argv]
    : [...argv];
  const [cmd, ...args] = full;
  if (!cmd) return Promise.reject(new TsbmError('runtime', 'empty command', { hint: 'give at least the program to run' }));
  // Locally the environment is not visible to other users, so secret env goes straight in.
  const env = { ...process.env, ...opts.env, ...opts.secretEnv };
  return new Promise<ExecResult>((resolve, reject) => {
    opts.signal?.throwIfAborted();
    const child = spawn(cmd, args, { cwd: opts.cwd, env, stdio: 'pipe' });
    const { out, err } = outputBuffers(opts);
    let failure: Error | undefined;
    const kill = (why: Error) => {
      failure ??= why;
      child.kill('SIGKILL');
    };
    const timer =
      opts.timeout && opts.timeout > 0
        ? setTimeout(
            () =>
              kill(
                new TsbmError('runtime', `command on ${host} timed out after ${opts.timeout} ms and was killed: ${quoteArgv(argv)}`, {
                  host,
                  hint: 'raise the timeout or find out why the command hangs',
                }),
              ),
            opts.timeout,
          )
        : undefined;
    const onAbort = () => {
      const r = opts.signal?.reason;
      kill(r instanceof Error ? r : new TsbmError('runtime', `command on ${host} was aborted: ${quoteArgv(argv)}`, { host }));
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (d: Buffer) => {
      out.push(d);
      opts.onStdout?.(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      err.push(d);
      opts.onStderr?.(d);
    });
    child.stdin.on('error', () => {});
    child.once('error', (e) => {
      failure ??= new TsbmError('runtime', `cannot run ${cmd} on ${host}: ${e.message}`, {
        host,
        cause: e,
        hint: (e as NodeJS.ErrnoException).code === 'ENOENT' ? `is ${cmd} installed and on PATH?` : 'check the command',
      });
    });
    child.once('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (failure) return reject(failure);
      resolve({
        rc: code ?? 128,
        stdout: out.toString(opts.stdoutEncoding ?? 'utf8'),
        stderr: err.toString('utf8'),
        ...(signal ? { signal: signal.replace(/^SIG/, '') } : {}),
      });
    });
    const stdin = opts.stdin;
    if (stdin === undefined) child.stdin.end();
    else if (typeof stdin === 'string' || Buffer.isBuffer(stdin)) child.stdin.end(stdin);
    else stdin.pipe(child.stdin);
  });
}

export function localConnection(host = 'localhost'): Connection {
  return {
    host,
    exec: (argv, opts = {}) => runLocal(host, argv, opts),
    execShell: (command, opts = {}) => runLocal(host, ['sh', '-c', command], opts),
    async put(data: Buffer | string | Readable, dest: string, opts: PutOptions = {}) {
      const mode = opts.mode ?? 0o644;
      if (opts.become) return pipedPut((a, o) => runLocal(host, a, o ?? {}), host, data, dest, { mode, become: opts.become });
      const tmp = path.join(path.dirname(dest), `.${path.basename(dest)}.tsbm-${randomBytes(4).toString('hex')}`);
      try {
        const src = typeof data === 'string' || Buffer.isBuffer(data) ? Readable.from([Buffer.from(data)]) : data;
        await pipeline(src, createWriteStream(tmp, { mode, flags: 'wx' }));
        await fs.chmod(tmp, mode);
        await fs.rename(tmp, dest);
      } catch (e) {
        await fs.unlink(tmp).catch(() => {});
        throw new TsbmError('runtime', `cannot write ${dest} on ${host}: ${(e as Error).message}`, {
          host,
          hint: 'check that the directory exists and is writable',
        });
      }
    },
    async get(file: string, opts: GetOptions = {}) {
      if (opts.become) return pipedGet((a, o) => runLocal(host, a, o ?? {}), host, file, { become: opts.become, maxBytes: getCap(opts) });
      try {
        return await readCapped(createReadStream(file), getCap(opts));
      } catch (e) {
        if (e instanceof OverCapError) throw tooBigToGet(host, file, e.cap);
        throw new TsbmError('runtime', `cannot read ${file} on ${host}: ${(e as Error).message}`, { host, hint: 'check the path' });
      }
    },
    async close() {},
  };
}
