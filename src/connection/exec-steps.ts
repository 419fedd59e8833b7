// Several argv commands in one remote round trip. Each command costs an SSH channel, a remote
// process start and a network round trip; a deploy's small probes (uname, meminfo, sfdisk...)
// cost far more in those than in their own work. The steps run in order in one `sh -c`, each
// quoted by quote.ts; after each, a random marker line carries its exit status on stdout and
// closes its part of stderr, so every step gets its own ExecResult back.
import { pooledRandomHex } from '../util/pooled-random.js';
import { quoteArgv } from '../util/shell-quote.js';
import type { Connection, ExecOptions, ExecResult } from './types.js';

export interface StepsOptions extends ExecOptions {
  /** The step that reads the batch's stdin (others read /dev/null); default none. */
  stdinStep?: number;
}

const NOT_RUN = 'not run: an earlier command in the same batch ended it';

/** False for a step that never started because the batch ended before it. */
export function stepRan(r: ExecResult): boolean {
  return !(r.rc === 255 && r.stderr === NOT_RUN);
}

/** The shell script for the steps; `marker` separates their outputs. */
export function stepsScript(steps: readonly (readonly string[])[], marker: string, stdinStep?: number): string {
  return steps
    .map((argv, i) => {
      const input = i === stdinStep ? '' : ' </dev/null';
      return `${quoteArgv(argv)}${input}; printf '\\n%s %s %s\\n' ${marker} ${i} $?; printf '\\n%s %s\\n' ${marker} ${i} >&2`;
    })
    .join('\n');
}

/**
 * Splits the batch's output back into one result per step. A step with no marker (the batch
 * was killed, or the remote shell died) gets the batch's own status and the rest of the
 * output; the steps after it were never run. Each marker line names its step, so a step whose
 * line went with output dropped from the middle (more than the output cap) is reported as
 * lost, never given a later step's status.
 */
export function splitStepsOutput(batch: ExecResult, marker: string, count: number): ExecResult[] {
  const results: ExecResult[] = [];
  let out = 0;
  let err = 0;
  const outMark = (i: number) => `\n${marker} ${i} `;
  const errMark = (i: number) => `\n${marker} ${i}\n`;
  for (let i = 0; i < count; i++) {
    const o = batch.stdout.indexOf(outMark(i), out);
    if (o < 0) {
      const later = laterMarker(batch.stdout, outMark, i + 1, count, out);
      if (later !== undefined) {
        for (let j = i; j < later; j++) results.push({ rc: 255, stdout: '', stderr: STATUS_LOST });
        const e = batch.stderr.indexOf(errMark(later - 1), err);
        if (e >= 0) err = e + errMark(later - 1).length;
        i = later - 1;
        continue;
      }
      const failedRc = batch.rc === 0 ? 255 : batch.rc;
      results.push({
        rc: failedRc,
        stdout: batch.stdout.slice(out),
        stderr: batch.stderr.slice(err),
        ...(batch.signal ? { signal: batch.signal } : {}),
      });
      for (let j = i + 1; j < count; j++)
        results.push({ rc: 255, stdout: '', stderr: NOT_RUN });
      return results;
    }
    const start = o + outMark(i).length;
    const lineEnd = batch.stdout.indexOf('\n', start);
    const rc = Number(batch.stdout.slice(start, lineEnd < 0 ? undefined : lineEnd));
    const e = batch.stderr.indexOf(errMark(i), err);
    results.push({
      rc: Number.isInteger(rc) ? rc : 255,
      stdout: batch.stdout.slice(out, o),
      stderr: e < 0 ? batch.stderr.slice(err) : batch.stderr.slice(err, e),
    });
    out = lineEnd < 0 ? batch.stdout.length : lineEnd + 1;
    if (e >= 0) err = e + errMark(i).length;
  }
  return results;
}

const STATUS_LOST =
  "this step's exit status was in output tsbm dropped (more than the output cap, tsbm_max_output): treated as failed";

/** The first step from `from` on whose marker is in the output, if any. */
function laterMarker(stdout: string, mark: (i: number) => string, from: number, count: number, pos: number): number | undefined {
  for (let k = from; k < count; k++) if (stdout.includes(mark(k), pos)) return k;
  return undefined;
}

/** The steps as one readable line, for the -vvv command log. */
export function describeSteps(steps: readonly (readonly string[])[]): string {
  return steps.map((s) => quoteArgv(s)).join(' ; ');
}

/** Runs the steps in one round trip on `conn`; one result per step, in order. */
export async function execSteps(
  conn: Pick<Connection, 'execShell'>,
  steps: readonly (readonly string[])[],
  opts: StepsOptions = {},
): Promise<ExecResult[]> {
  if (steps.length === 0) return [];
  const marker = `__tsbm_step_${pooledRandomHex(8)}`;
  const { stdinStep, ...execOpts } = opts;
  const batch = await conn.execShell(stepsScript(steps, marker, stdinStep), { ...execOpts, posixScript: true });
  return splitStepsOutput(batch, marker, steps.length);
}
