// Modules batch their small remote commands through here: one round trip where the context can
// (ModuleContext.execSteps), else the same steps one by one with the same results.
import type { StepsOptions } from '../../connection/exec-steps.js';
import type { ExecResult } from '../../connection/types.js';
import type { ModuleContext } from '../types.js';

export async function runSteps(
  ctx: Pick<ModuleContext, 'exec' | 'execSteps'>,
  steps: readonly (readonly string[])[],
  opts: StepsOptions = {},
): Promise<ExecResult[]> {
  if (ctx.execSteps) return ctx.execSteps(steps, opts);
  const { stdinStep, stdin, ...rest } = opts;
  const results: ExecResult[] = [];
  for (const [i, argv] of steps.entries()) {
    const opts = i === stdinStep && stdin !== undefined ? { ...rest, stdin } : rest;
    // As in a batch, a program that cannot start is that step's failure (rc 127), not the
    // batch's; anything else (timeout, lost connection) still ends everything.
    const r = await ctx.exec(argv, opts).catch((e: unknown): ExecResult => {
      if (!notFound(e)) throw e;
      return { rc: 127, stdout: '', stderr: (e as Error).message };
    });
    results.push(r);
  }
  return results;
}

/** A local program that does not exist (spawn ENOENT), as a shell would report with 127. */
function notFound(e: unknown): boolean {
  const cause = e instanceof Error ? e.cause : undefined;
  return (cause as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
