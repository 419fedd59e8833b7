// Builds the one remote command string for an exec: env, secret env (via stdin), cwd and
// become wrapped around argv, all quoted by quote.ts.
import { TsbmError } from '../errors.js';
import { isSecretName } from '../output/redact.js';
import { quoteArgv } from '../util/shell-quote.js';
import type { ExecOptions } from './types.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface RemoteCommand {
  command: string;
  /** Bytes to send on stdin before the caller's own stdin (secret env values). */
  stdinPrefix?: string;
}

function checkName(name: string): void {
  if (!ENV_NAME.test(name)) {
    throw new TsbmError('runtime', `invalid environment variable name "${name}"`, {
      hint: 'names must match [A-Za-z_][A-Za-z0-9_]*',
    });
  }
}

export function buildRemoteCommand(argv: readonly string[], opts: ExecOptions = {}): RemoteCommand {
  if (argv.length === 0) throw new TsbmError('runtime', 'empty command', { hint: 'give at least the program to run' });
  const plainEnv: [string, string][] = [];
  const secretEnv: [string, string][] = Object.entries(opts.secretEnv ?? {});
  for (const [k, v] of Object.entries(opts.env ?? {})) (isSecretName(k) ? secretEnv : plainEnv).push([k, v]);
  let inner: string[] = [...argv];
  let stdinPrefix: string | undefined;

  if (secretEnv.length || opts.cwd !== undefined) {
    // A tiny sh prelude: read secret values from stdin (never argv), cd, then exec the command.
    const steps: string[] = [];
    for (const [k, v] of secretEnv) {
      checkName(k);
      if (/[\n\0]/.test(v)) {
        throw new TsbmError('runtime', `secret environment value ${k} contains a newline or NUL`, {
          hint: 'pass multi-line secrets as a file instead',
        });
      }
      steps.push(`IFS= read -r ${k} && export ${k}`);
    }
    if (opts.cwd !== undefined) steps.push('cd -- "$1" && shift');
    steps.push('exec "$@"');
    inner = ['sh', '-c', steps.join(' && '), 'sh', ...(opts.cwd !== undefined ? [opts.cwd] : []), ...inner];
    if (secretEnv.length) stdinPrefix = secretEnv.map(([, v]) => `${v}\n`).join('');
  }
  if (plainEnv.length) {
    for (const [k] of plainEnv) checkName(k);
    inner = ['env', '--', ...plainEnv.map(([k, v]) => `${k}=${v}`), ...inner];
  }
  if (opts.become) {
    inner = ['sudo', '-n', ...(opts.become.user ? ['-u', opts.become.user] : []), '--', ...inner];
  }
  return { command: quoteArgv(inner), ...(stdinPrefix !== undefined ? { stdinPrefix } : {}) };
}
