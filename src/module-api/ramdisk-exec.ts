// Small helpers the ramdisk modules share: errors that name host and task, and commands that
// must succeed. Keeps each module file about its own decisions.
import { randomBytes } from 'node:crypto';
import type { ExecOptions, ExecResult } from '../connection/types.js';
import { TsbmError } from '../errors.js';
import type { ModuleContext } from './types.js';

export function hostError(
  ctx: Pick<ModuleContext, 'host' | 'task'>,
  message: string,
  hint?: string,
  cause?: unknown,
): TsbmError {
  return new TsbmError('runtime', `${ctx.host}: ${message}`, {
    host: ctx.host,
    task: ctx.task,
    ...(hint ? { hint } : {}),
    ...(cause === undefined ? {} : { cause }),
  });
}

type Exec = (argv: readonly string[], opts?: ExecOptions) => Promise<ExecResult>;

/** Runs argv; a non-zero exit becomes a TsbmError with the command's name and stderr. */
export async function mustExec(
  ctx: Pick<ModuleContext, 'host' | 'task'>,
  exec: Exec,
  argv: readonly string[],
  hint?: string,
  opts?: ExecOptions,
): Promise<ExecResult> {
  return mustSucceed(ctx, argv, await exec(argv, opts), hint);
}

/** The check of mustExec for a result already in hand (e.g. one step of ctx.execSteps). */
export function mustSucceed(
  ctx: Pick<ModuleContext, 'host' | 'task'>,
  argv: readonly string[],
  r: ExecResult,
  hint?: string,
): ExecResult {
  if (r.rc !== 0) {
    const err = (r.stderr || r.stdout).trim().split('\n').slice(-5).join(' | ');
    throw hostError(
      ctx,
      `\`${argv.slice(0, 3).join(' ')}\` failed (rc ${r.rc}): ${err || 'no output'}`,
      hint,
    );
  }
  return r;
}

/**
 * Random suffix for temp files on the ramdisk: 96 bits from the CSPRNG, so another local user
 * cannot predict the name (Math.random's state can be recovered from a few outputs).
 */
export function randomName(): string {
  return randomBytes(12).toString('hex');
}
