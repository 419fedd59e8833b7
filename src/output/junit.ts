// JUnit XML for CI systems: a testsuite per play, one testcase per (host, task) named
// `host: task`. A testcase's outcome is the task's result, classified as the recap counts it
// (recap-counts.ts): a rescued or ignored failure is no JUnit failure, a loop's items fold into
// their task's result, and results the recap leaves out (meta) are no testcase. Problems found
// before the run (validation_error) are failed testcases of a suite of their own.
// Events arrive redacted from the bus; the file is written once, when the run ends.
import { writeFile } from 'node:fs/promises';
import { TsbmError } from '../errors.js';
import type { EventBus, HostStatus, TsbmEvent } from './events.js';
import { problemLine } from './format.js';
import { xmlEscape, xmlText } from './xml.js';

interface Case {
  host: string;
  task: string;
  /** Overrides `host: task` (a problem found before the run is named by its position). */
  name?: string;
  status: HostStatus;
  /** Set once the task's own result (not an item's) arrived: it decides the status. */
  final: boolean;
  messages: string[];
  timeMs: number;
}

interface Suite {
  name: string;
  startedAt: number;
  endedAt: number;
  cases: Map<string, Case>;
}

// Worse outcomes override better ones when results of one testcase fold together.
const RANK: Record<HostStatus, number> = {
  skipped: 0,
  ok: 1,
  changed: 2,
  ignored: 3,
  rescued: 4,
  failed: 5,
  unreachable: 6,
};

/** The suite holding the problems `tsbm run` found before its first task. */
export const CHECKS_SUITE = 'tsbm checks before the run';

const seconds = (ms: number) => (ms / 1000).toFixed(3);

export function renderJUnit(suites: Suite[], totalMs: number): string {
  const all = suites.flatMap((s) => [...s.cases.values()]);
  const failures = (cs: Case[]) => cs.filter((c) => c.status === 'failed' || c.status === 'unreachable').length;
  const skipped = (cs: Case[]) => cs.filter((c) => c.status === 'skipped').length;
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="tsbm" tests="${all.length}" failures="${failures(all)}" errors="0" skipped="${skipped(all)}" time="${seconds(totalMs)}">`,
  ];
  suites.forEach((s, i) => {
    const cs = [...s.cases.values()];
    // the play's wall time: hosts run side by side, so summing case times would overstate it
    const time = s.endedAt - s.startedAt;
    out.push(
      `  <testsuite name="${xmlEscape(s.name)}" id="${i}" tests="${cs.length}" failures="${failures(cs)}" errors="0" skipped="${skipped(cs)}" time="${seconds(time)}" timestamp="${new Date(s.startedAt).toISOString().replace(/\.\d+Z$/, '')}">`,
    );
    for (const c of cs) {
      const head = `    <testcase name="${xmlEscape(c.name ?? `${c.host}: ${c.task}`)}" classname="${xmlEscape(s.name)}" time="${seconds(c.timeMs)}"`;
      const msg = c.messages.join('\n');
      if (c.status === 'failed' || c.status === 'unreachable') {
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

/** Collects results from the bus; `done()` writes FILE (also when the run was interrupted). */
export function attachJUnit(bus: EventBus, file: string): { done(): Promise<void> } {
  const suites: Suite[] = [];
  let current: Suite | undefined;
  let runStart: number | undefined;
  let totalMs: number | undefined;

  const suiteFor = (time: number): Suite => {
    if (!current) {
      // results without a play_start (should not happen) still get reported
      current = { name: 'tsbm', startedAt: time, endedAt: time, cases: new Map() };
      suites.push(current);
    }
    return current;
  };

  const off = bus.on((e: TsbmEvent) => {
    if (e.type === 'run_start') runStart = e.time;
    else if (e.type === 'play_start') {
      current = { name: e.play, startedAt: e.time, endedAt: e.time, cases: new Map() };
      suites.push(current);
    } else if (e.type === 'host_result') {
      if (e.counts && Object.keys(e.counts).length === 0) return; // not in the recap either
      const suite = suiteFor(e.time - e.durationMs);
      suite.endedAt = Math.max(suite.endedAt, e.time);
      const key = `${e.taskId}\0${e.host}`;
      const prev = suite.cases.get(key);
      const msg = e.msg ?? '';
      const final = e.item === undefined;
      if (!prev) {
        suite.cases.set(key, { host: e.host, task: e.task, status: e.status, final, messages: msg ? [msg] : [], timeMs: e.durationMs });
      } else {
        // The task's result replaces what its items said (a failed item of an ignored loop is
        // no failure); results of one task run again (a handler, an included file) fold.
        if (final && !prev.final) {
          prev.status = e.status;
          prev.timeMs = e.durationMs; // the task's time spans its items'
        } else if (final === prev.final) {
          if (RANK[e.status] > RANK[prev.status]) prev.status = e.status;
          prev.timeMs += e.durationMs;
        }
        prev.final ||= final;
        if (msg) prev.messages.push(msg);
      }
    } else if (e.type === 'validation_error') {
      // One failed testcase per problem found before the run, in a suite of their own.
      let suite = suites.find((s) => s.name === CHECKS_SUITE);
      if (!suite) {
        suite = { name: CHECKS_SUITE, startedAt: e.time, endedAt: e.time, cases: new Map() };
        suites.push(suite);
      }
      const where = e.pos ? `${e.pos.file}:${e.pos.line}:${e.pos.col}` : 'run';
      suite.cases.set(`${suite.cases.size}`, {
        host: '',
        task: '',
        name: `${where}: ${e.message}`,
        status: 'failed',
        final: true,
        messages: [problemLine(e)],
        timeMs: 0,
      });
    } else if (e.type === 'run_end') totalMs = e.durationMs;
  });

  return {
    done: async () => {
      off();
      const total = totalMs ?? (runStart !== undefined ? Date.now() - runStart : 0);
      try {
        await writeFile(file, renderJUnit(suites, total), 'utf8');
      } catch (e) {
        throw new TsbmError('runtime', `cannot write the JUnit file ${file}: ${(e as Error).message}`, {
          hint: 'check that the --junit directory exists and is writable',
        });
      }
    },
  };
}
