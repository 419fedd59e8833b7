// `tsbm run`'s checks before the first task (src/executor/preflight-validate.ts), reported in the
// run's output mode: one `validation_error` event per problem (plain and TTY print the line
// `tsbm validate` prints, JSON has the event, JUnit a failed testcase), then run_end with exit 4
// and one summary line for stderr. Nothing is started, locked or journaled when it refuses.
import { EXIT, type TsbmError } from '../errors.js';
import type { Loaded } from '../executor/preflight-validate.js';
import type { RunOptions } from '../executor/options.js';
import type { EventBus } from '../output/events.js';

/** Refused: the exit code and the summary for stderr (written once the renderers are done). */
export type Preflight = { refused: number; summary: string } | { loaded: Loaded };

export async function runPreflight(
  opts: RunOptions,
  bus: EventBus,
  resume: { completed?: (host: string, taskId: string) => boolean } | undefined,
): Promise<Preflight> {
  const started = Date.now();
  const { preflightValidate } = await import('../executor/preflight-validate.js');
  const r = preflightValidate(opts, resume?.completed ? { completed: resume.completed } : {});
  if (r.errors.length === 0 && r.loaded) return { loaded: r.loaded };
  for (const e of r.errors) bus.emit(validationEvent(e));
  const code = EXIT.unreachableOrParse;
  bus.emit({ type: 'run_end', time: Date.now(), exitCode: code, durationMs: Date.now() - started });
  const n = r.errors.length;
  return {
    refused: code,
    summary: `tsbm: error: ${n} error${n === 1 ? '' : 's'} in ${opts.playbook} found before the first task; nothing was run on any host (tsbm validate reports the same)\n`,
  };
}

function validationEvent(e: TsbmError) {
  const hosts = (e as { hosts?: readonly string[] }).hosts;
  return {
    type: 'validation_error' as const,
    time: Date.now(),
    message: e.message,
    ...(e.hint ? { hint: e.hint } : {}),
    ...(e.pos ? { pos: { file: e.pos.file, line: e.pos.line, col: e.pos.col } } : {}),
    ...(hosts ? { hosts: [...hosts] } : {}),
  };
}
