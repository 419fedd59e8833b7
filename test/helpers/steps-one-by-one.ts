// ModuleContext.execSteps for scripted test contexts: the same steps through the context's own
// exec, one by one (stdin to the chosen step only), so a script of argv -> result still applies.
// Contexts over a real connection use the real execSteps instead.
import type { StepsOptions } from '../../src/connection/exec-steps.js';
import type { ExecResult } from '../../src/connection/types.js';
import type { ModuleContext } from '../../src/module-api/types.js';

export async function stepsOneByOne(
  exec: ModuleContext['exec'],
  steps: readonly (readonly string[])[],
  opts: StepsOptions = {},
): Promise<ExecResult[]> {
  const { stdinStep, stdin, ...rest } = opts;
  const results: ExecResult[] = [];
  for (const [i, argv] of steps.entries()) {
    results.push(await exec(argv, i === stdinStep && stdin !== undefined ? { ...rest, stdin } : rest));
  }
  return results;
}
