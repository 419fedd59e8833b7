// The per-task JUnit form (`--junit-cases task`): a testcase per (host, task), named
// `host: task`. A testcase's outcome is the task's own result (a loop's items fold into it; a
// failed item of an ignored loop is no failure); results of one task run again (a handler, an
// included file) fold, the worst winning. Tasks a host never reached have no testcase, so the
// set varies with where a run failed.
import { isError, isFailure, type JUnitPlay, type JUnitProblem, junitDocument, type PlayCases, RANK, seconds, type Unfinished } from './junit-model.js';
import type { HostStatus } from './events.js';
import { xmlEscape, xmlText } from './xml.js';

interface Case {
  host: string;
  task: string;
  status: HostStatus;
  /** Set once the task's own result (not an item's) arrived: it decides the status. */
  final: boolean;
  messages: string[];
  timeMs: number;
}

function casesOf(play: JUnitPlay): Case[] {
  const cases = new Map<string, Case>();
  for (const r of play.results) {
    const key = `${r.taskId}\0${r.host}`;
    const prev = cases.get(key);
    const final = r.item !== true;
    if (!prev) {
      cases.set(key, { host: r.host, task: r.task, status: r.status, final, messages: r.msg ? [r.msg] : [], timeMs: r.durationMs });
    } else {
      if (final && !prev.final) {
        prev.status = r.status;
        prev.timeMs = r.durationMs; // the task's time spans its items'
      } else if (final === prev.final) {
        if (RANK[r.status] > RANK[prev.status]) prev.status = r.status;
        prev.timeMs += r.durationMs;
      }
      prev.final ||= final;
      if (r.msg) prev.messages.push(r.msg);
    }
  }
  return [...cases.values()];
}

function taskCaseLines(c: Case, classname: string): string[] {
  const head = `    <testcase name="${xmlEscape(`${c.host}: ${c.task}`)}" classname="${xmlEscape(classname)}" time="${seconds(c.timeMs)}"`;
  const msg = c.messages.join('\n');
  if (isFailure(c.status) || isError(c.status)) {
    const tag = isError(c.status) ? 'error' : 'failure';
    return [`${head}>`, `      <${tag} message="${xmlEscape(msg || c.status)}" type="${c.status}">${xmlText(msg)}</${tag}>`, '    </testcase>'];
  }
  if (c.status === 'skipped') return [`${head}>`, `      <skipped${msg ? ` message="${xmlEscape(msg)}"` : ''}/>`, '    </testcase>'];
  if (msg) return [`${head}>`, `      <system-out>${xmlText(`${c.status}: ${msg}`)}</system-out>`, '    </testcase>'];
  return [`${head}/>`];
}

/** A host the run left unfinished without a stopped task in its last play: a testcase of its own, an error. */
function unfinishedLines(host: string, why: string, classname: string): string[] {
  const message = `unfinished: ${why || 'the run stopped before this host got to the end'}`;
  return [
    `    <testcase name="${xmlEscape(`${host}: (unfinished)`)}" classname="${xmlEscape(classname)}" time="0.000">`,
    `      <error message="${xmlEscape(message)}" type="unfinished">${xmlText(message)}</error>`,
    '    </testcase>',
  ];
}

export function renderTaskCases(plays: JUnitPlay[], problems: JUnitProblem[], totalMs: number, unfinished: Unfinished = new Map()): string {
  const cases = plays.map((p): PlayCases => {
    const cs = casesOf(p);
    const left = [...(unfinished.get(p) ?? new Map<string, string>())].filter(([h]) => !cs.some((c) => c.host === h && isError(c.status)));
    return {
      tests: cs.length + left.length,
      failures: cs.filter((c) => isFailure(c.status)).length,
      errors: cs.filter((c) => isError(c.status)).length + left.length,
      skipped: cs.filter((c) => c.status === 'skipped').length,
      lines: [...cs.flatMap((c) => taskCaseLines(c, p.classname)), ...left.flatMap(([h, why]) => unfinishedLines(h, why, p.classname))],
    };
  });
  return junitDocument(plays, cases, problems, totalMs);
}
