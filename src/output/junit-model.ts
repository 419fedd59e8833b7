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

/** Hosts the run left unfinished, by the play they were last in: their testcase there is an error. */
export type Unfinished = ReadonlyMap<JUnitPlay, ReadonlyMap<string, string>>;

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
  interrupted: 7,
};

export const seconds = (ms: number) => (ms / 1000).toFixed(3);
const timestamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, '');
export const isFailure = (s: HostStatus) => s === 'failed' || s === 'unreachable';
/** A task the run stopped (Ctrl-C): a JUnit error, not a failure of the host and never a pass. */
export const isError = (s: HostStatus) => s === 'interrupted';

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
function checksSuite(problems: readonly JUnitProblem[], id: number): string[] {
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

/** One play's testcases, as a form renders them: the counts its testsuite line carries, and the XML. */
export interface PlayCases {
  tests: number;
  failures: number;
  /** Testcases the run stopped before they finished (interrupted, unfinished hosts). */
  errors: number;
  skipped: number;
  /** The testcase elements, indented four spaces. */
  lines: string[];
}

/**
 * The document both forms share: the testsuites line with the run's totals, the checks suite,
 * then one testsuite per play (its wall time: hosts run side by side, so summing case times
 * would overstate it) around that play's cases.
 */
export function junitDocument(plays: readonly JUnitPlay[], cases: readonly PlayCases[], problems: readonly JUnitProblem[], totalMs: number): string {
  const sum = (k: 'tests' | 'failures' | 'errors' | 'skipped') => cases.reduce((n, c) => n + c[k], 0);
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="tsbm" tests="${sum('tests') + problems.length}" failures="${sum('failures') + problems.length}" errors="${sum('errors')}" skipped="${sum('skipped')}" time="${seconds(totalMs)}">`,
    ...checksSuite(problems, 0),
  ];
  const first = problems.length ? 1 : 0;
  plays.forEach((p, n) => {
    const c = cases[n]!;
    out.push(
      `  <testsuite name="${xmlEscape(p.name)}" id="${n + first}" tests="${c.tests}" failures="${c.failures}" errors="${c.errors}" skipped="${c.skipped}" time="${seconds(p.endedAt - p.startedAt)}" timestamp="${timestamp(p.startedAt)}">`,
      ...c.lines,
      '  </testsuite>',
    );
  });
  out.push('</testsuites>', '');
  return out.join('\n');
}
