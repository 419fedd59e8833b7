// The JUnit form CI dashboards want (the default): one testcase per host per play, named by the
// host, classname `playbook.yml/Play name`, holding each task's outcome as a step (a line of
// its system-out). The set of testcases is the play's hosts, whatever happened to them, so it
// is the same from run to run. A host fails when a failure was not rescued (or it was
// unreachable; a rescued or ignored failure is a step, as the recap counts it); it is skipped
// when nothing ran on it.
import { formatDuration } from './format.js';
import { isError, isFailure, type JUnitPlay, type JUnitProblem, type JUnitResult, junitDocument, type PlayCases, RANK, seconds, type Unfinished } from './junit-model.js';
import type { HostStatus } from './events.js';
import { xmlEscape, xmlText } from './xml.js';

interface Step {
  task: string;
  status: HostStatus;
  msg?: string;
  durationMs: number;
}

interface HostCase {
  host: string;
  steps: Step[];
  status: 'passed' | 'failed' | 'error' | 'skipped';
  failure?: { type: HostStatus | 'unfinished'; message: string };
  timeMs: number;
}

/** A host's results in one play as steps: a loop's items fold into the loop's own result. */
function stepsOf(results: JUnitResult[]): Step[] {
  const steps: Step[] = [];
  let loop: { taskId: string; task: string; status: HostStatus; failure?: string; durationMs: number } | undefined;
  // items whose loop result never came (an interrupted run): a step of their own
  const flushItems = () => {
    if (loop) steps.push({ task: loop.task, status: loop.status, ...(loop.failure ? { msg: loop.failure } : {}), durationMs: loop.durationMs });
    loop = undefined;
  };
  for (const r of results) {
    if (loop && loop.taskId !== r.taskId) flushItems();
    if (r.item) {
      loop ??= { taskId: r.taskId, task: r.task, status: r.status, durationMs: 0 };
      if (RANK[r.status] > RANK[loop.status]) loop.status = r.status;
      if (isFailure(r.status) && loop.failure === undefined && r.msg) loop.failure = r.msg;
      loop.durationMs += r.durationMs;
      continue;
    }
    const failure = loop?.failure;
    loop = undefined;
    const msg = failure && r.msg !== failure ? `${r.msg ?? ''} (first failed item: ${failure})`.trim() : r.msg;
    steps.push({ task: r.task, status: r.status, ...(msg ? { msg } : {}), durationMs: r.durationMs });
  }
  flushItems();
  return steps;
}

/** `unfinished`: why the run left the host before the end of the playbook, when this play was its last. */
function hostCase(host: string, results: JUnitResult[], unfinished: string | undefined): HostCase {
  const steps = stepsOf(results);
  const timeMs = results.length ? Math.max(...results.map((r) => r.end)) - Math.min(...results.map((r) => r.start)) : 0;
  const failed = steps.find((s) => isFailure(s.status));
  if (failed) {
    const message = `${failed.task}: ${failed.msg ?? failed.status}`;
    return { host, steps, status: 'failed', failure: { type: failed.status, message }, timeMs };
  }
  const stopped = steps.find((s) => isError(s.status));
  if (stopped || unfinished !== undefined) {
    const message = stopped ? `${stopped.task}: ${stopped.msg ?? stopped.status}` : `unfinished: ${unfinished || 'the run stopped before this host got to the end'}`;
    return { host, steps, status: 'error', failure: { type: stopped ? stopped.status : 'unfinished', message }, timeMs };
  }
  const ran = steps.some((s) => s.status !== 'skipped');
  return { host, steps, status: ran ? 'passed' : 'skipped', timeMs };
}

const stepLine = (s: Step) =>
  `${s.status}: ${s.task} (${formatDuration(s.durationMs)})${s.msg ? `: ${s.msg}` : ''}`;

function hostCaseLines(c: HostCase, classname: string): string[] {
  const out = [`    <testcase name="${xmlEscape(c.host)}" classname="${xmlEscape(classname)}" time="${seconds(c.timeMs)}">`];
  if (c.failure) {
    const tag = c.status === 'error' ? 'error' : 'failure';
    out.push(`      <${tag} message="${xmlEscape(c.failure.message)}" type="${c.failure.type}">${xmlText(c.failure.message)}</${tag}>`);
  } else if (c.status === 'skipped') {
    out.push(`      <skipped message="${c.steps.length ? 'every task was skipped' : 'no task ran on this host in this play'}"/>`);
  }
  if (c.steps.length) out.push(`      <system-out>${xmlText(c.steps.map(stepLine).join('\n'))}</system-out>`);
  out.push('    </testcase>');
  return out;
}

export function renderHostCases(plays: JUnitPlay[], problems: JUnitProblem[], totalMs: number, unfinished: Unfinished = new Map()): string {
  const cases = plays.map((p): PlayCases => {
    const by = new Map<string, JUnitResult[]>(p.hosts.map((h) => [h, []]));
    for (const r of p.results) (by.get(r.host) ?? by.set(r.host, []).get(r.host)!).push(r);
    const cs = [...by].map(([h, rs]) => hostCase(h, rs, unfinished.get(p)?.get(h)));
    const count = (st: HostCase['status']) => cs.filter((c) => c.status === st).length;
    return { tests: cs.length, failures: count('failed'), errors: count('error'), skipped: count('skipped'), lines: cs.flatMap((c) => hostCaseLines(c, p.classname)) };
  });
  return junitDocument(plays, cases, problems, totalMs);
}
