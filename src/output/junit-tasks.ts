// The per-task JUnit form (`--junit-cases task`): a testcase per (host, task), named
// `host: task`. A testcase's outcome is the task's own result (a loop's items fold into it; a
// failed item of an ignored loop is no failure); results of one task run again (a handler, an
// included file) fold, the worst winning. Tasks a host never reached have no testcase, so the
// set varies with where a run failed.
import { isFailure, type JUnitPlay, type JUnitProblem, junitDocument, type PlayCases, RANK, seconds } from './junit-model.js';
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
  if (isFailure(c.status)) {
    return [`${head}>`, `      <failure message="${xmlEscape(msg || c.status)}" type="${c.status}">${xmlText(msg)}</failure>`, '    </testcase>'];
  }
  if (c.status === 'skipped') return [`${head}>`, `      <skipped${msg ? ` message="${xmlEscape(msg)}"` : ''}/>`, '    </testcase>'];
  if (msg) return [`${head}>`, `      <system-out>${xmlText(`${c.status}: ${msg}`)}</system-out>`, '    </testcase>'];
  return [`${head}/>`];
}

export function renderTaskCases(plays: JUnitPlay[], problems: JUnitProblem[], totalMs: number): string {
  const cases = plays.map((p): PlayCases => {
    const cs = casesOf(p);
    return {
      tests: cs.length,
      failures: cs.filter((c) => isFailure(c.status)).length,
      skipped: cs.filter((c) => c.status === 'skipped').length,
      lines: cs.flatMap((c) => taskCaseLines(c, p.classname)),
    };
  });
  return junitDocument(plays, cases, problems, totalMs);
}
