// Shared by command and shell: creates/removes guards and the registered result shape.
import type { ExecResult } from '../../connection/types.js';
import type { ModuleContext, ModuleResult } from '../../module-api/types.js';

/** A result that skips the command when `creates` exists or `removes` is missing; else undefined. */
export async function guardCreatesRemoves(
  ctx: ModuleContext,
  a: { creates?: string; removes?: string; chdir?: string },
): Promise<ModuleResult | undefined> {
  const exists = async (p: string) =>
    (await ctx.exec(['test', '-e', p], a.chdir !== undefined ? { cwd: a.chdir } : {})).rc === 0;
  if (a.creates !== undefined && (await exists(a.creates))) {
    return { changed: false, rc: 0, stdout: '', stderr: '', stdout_lines: [], stderr_lines: [], msg: `skipped, since ${a.creates} exists` };
  }
  if (a.removes !== undefined && !(await exists(a.removes))) {
    return { changed: false, rc: 0, stdout: '', stderr: '', stdout_lines: [], stderr_lines: [], msg: `skipped, since ${a.removes} does not exist` };
  }
  return undefined;
}

/**
 * Check mode, once the creates/removes guard let the command through: with a guard it "would
 * run" and counts changed, as ansible-playbook reports it; without one nothing could be
 * checked, and it is skipped.
 */
export function checkModeResult(what: string, a: { creates?: string; removes?: string }): ModuleResult {
  if (a.creates === undefined && a.removes === undefined) return { changed: false, skipped: true, msg: `${what} not run in check mode` };
  return { changed: true, rc: 0, stdout: '', stderr: '', stdout_lines: [], stderr_lines: [], msg: 'Command would have run if not in check mode' };
}

function lines(s: string): string[] {
  const l = s.split('\n');
  if (l.at(-1) === '') l.pop();
  return l;
}

export function commandResult(r: ExecResult, cmd: unknown, start: number): ModuleResult {
  const end = Date.now();
  const stdout = r.stdout.replace(/\n$/, '');
  const stderr = r.stderr.replace(/\n$/, '');
  return {
    changed: true,
    ...(r.rc !== 0 ? { failed: true, msg: r.signal ? `killed by signal ${r.signal}` : `non-zero return code ${r.rc}` } : {}),
    cmd,
    rc: r.rc,
    stdout,
    stderr,
    stdout_lines: lines(r.stdout),
    stderr_lines: lines(r.stderr),
    start: new Date(start).toISOString(),
    end: new Date(end).toISOString(),
    delta_ms: end - start,
  };
}
