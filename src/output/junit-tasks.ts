// The per-task JUnit form (`--junit-cases task`): a testcase per (host, task), named
// `host: task`. A testcase's outcome is the task's own result (a loop's items fold into it; a
// failed item of an ignored loop is no failure); results of one task run again (a handler, an
// included file) fold, the worst winning. Tasks a host never reached have no testcase, so the
// set varies with where a run failed.
import { checksSuite, isFailure, type JUnitPlay, type JUnitProblem, RANK, seconds, timestamp } from './junit-model.js';
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

export function renderTaskCases(plays: JUnitPlay[], problems: JUnitProblem[], totalMs: number): string {
  const all = plays.map(casesOf);
  const flat = all.flat();
  const failures = (cs: Case[]) => cs.filter((c) => isFailure(c.status)).length;
  const skipped = (cs: Case[]) => cs.filter((c) => c.status === 'skipped').length;
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="tsbm" tests="${flat.length + problems.length}" failures="${failures(flat) + problems.length}" errors="0" skipped="${skipped(flat)}" time="${seconds(totalMs)}">`,
    ...checksSuite(problems, 0),
  ];
  const first = problems.length ? 1 : 0;
  plays.forEach((p, n) => {
    const i = n + first;
    const cs = all[n]!;
    // the play's wall time: hosts run side by side, so summing case times would overstate it
    out.push(
      `  <testsuite name="${xmlEscape(p.name)}" id="${i}" tests="${cs.length}" failures="${failures(cs)}" errors="0" skipped="${skipped(cs)}" time="${seconds(p.endedAt - p.startedAt)}" timestamp="${timestamp(p.startedAt)}">`,
    );
    for (const c of cs) {
      const head = `    <testcase name="${xmlEscape(`${c.host}: ${c.task}`)}" classname="${xmlEscape(p.classname)}" time="${seconds(c.timeMs)}"`;
      const msg = c.messages.join('\n');
      if (isFailure(c.status)) {
        out.push(`${head}>`);
        out.push(`      <failure message="${xmlEscape(msg || c.status)}" type="${c.status}">${xmlText(msg)}</failure>`);
        out.push('    </testcase>');
      } else if (c.status === 'skipped') {
        out.push(`${head}>`, `      <skipped${msg ? ` message="${xmlEscape(msg)}"` : ''}/>`, '    </testcase>');
      } else if (msg) {
        out.push(`${head}>`, `      <system-out>${xmlText(`${c.status}: ${msg}`)}</system-out>`, '    </testcase>');
      } else {
        out.push(`${head}/>`);
      }
    }
    out.push('  </testsuite>');
  });
  out.push('</testsuites>', '');
  return out.join('\n');
}
