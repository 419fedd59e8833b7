// What the JUnit writer keeps of a run: per play, its hosts and every result in order. Both
// forms (a testcase per host, a testcase per host and task) are drawn from it.
import type { HostStatus } from './events.js';
import { xmlEscape, xmlText } from './xml.js';

export interface JUnitResult {
  host: string;
  taskId: string;
  task: string;
  status: HostStatus;
  msg?: string;
  /** A loop item's result (the task's own result follows the items and decides). */
  item?: boolean;
  start: number;
  end: number;
  durationMs: number;
}

export interface JUnitPlay {
  name: string;
  /** `playbook.yml/Play name`: the testcase classname. */
  classname: string;
  /** The play's hosts (after --limit), as play_start named them. */
  hosts: string[];
  startedAt: number;
  endedAt: number;
  results: JUnitResult[];
}

/** Worse outcomes override better ones when results are folded together. */
export const RANK: Record<HostStatus, number> = {
  skipped: 0,
  ok: 1,
  changed: 2,
  ignored: 3,
  rescued: 4,
  failed: 5,
  unreachable: 6,
};

export const seconds = (ms: number) => (ms / 1000).toFixed(3);
export const timestamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, '');
export const isFailure = (s: HostStatus) => s === 'failed' || s === 'unreachable';

/** A problem `tsbm run` found before its first task (a validation_error event). */
export interface JUnitProblem {
  /** `file:line:col: message`, the testcase's name. */
  name: string;
  /** The whole line, with its hint: the failure. */
  line: string;
  time: number;
}

/** The suite holding the problems `tsbm run` found before its first task. */
const CHECKS_SUITE = 'tsbm checks before the run';

/** That suite, one failed testcase per problem (the same in both forms); nothing when none. */
export function checksSuite(problems: readonly JUnitProblem[], id: number): string[] {
  if (problems.length === 0) return [];
  const at = problems[0]!.time;
  return [
    `  <testsuite name="${CHECKS_SUITE}" id="${id}" tests="${problems.length}" failures="${problems.length}" errors="0" skipped="0" time="0.000" timestamp="${timestamp(at)}">`,
    ...problems.flatMap((p) => [
      `    <testcase name="${xmlEscape(p.name)}" classname="${CHECKS_SUITE}" time="0.000">`,
      `      <failure message="${xmlEscape(p.line)}" type="failed">${xmlText(p.line)}</failure>`,
      '    </testcase>',
    ]),
    '  </testsuite>',
  ];
}
