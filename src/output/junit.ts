// JUnit XML for CI systems, written once when the run ends (also when it was interrupted).
// Default: a testcase per host per play (junit-hosts.ts), a stable set CI dashboards can
// track; `--junit-cases task`: a testcase per host and task (junit-tasks.ts). Outcomes are
// classified as the recap counts them (recap-counts.ts): a rescued or ignored failure is no
// JUnit failure, and results the recap leaves out (meta) are left out. Problems found before
// the run (validation_error) are failed testcases of a suite of their own, in both forms.
// Events arrive redacted from the bus.
import { writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { TsbmError } from '../errors.js';
import type { EventBus, TsbmEvent } from './events.js';
import { problemLine } from './format.js';
import { renderHostCases } from './junit-hosts.js';
import type { HostEnd } from './host-outcome.js';
import type { JUnitPlay, JUnitProblem, Unfinished } from './junit-model.js';
import { renderTaskCases } from './junit-tasks.js';

export type JUnitCases = 'host' | 'task';
function renderJUnit(plays: JUnitPlay[], problems: JUnitProblem[], totalMs: number, cases: JUnitCases, ends: Record<string, HostEnd>): string {
  const left = unfinishedByPlay(plays, ends);
  return cases === 'task' ? renderTaskCases(plays, problems, totalMs, left) : renderHostCases(plays, problems, totalMs, left);
}

/** Each unfinished host (the recap's outcomes) with why, under the last play that listed it. */
function unfinishedByPlay(plays: JUnitPlay[], ends: Record<string, HostEnd>): Unfinished {
  const out = new Map<JUnitPlay, Map<string, string>>();
  for (const [host, end] of Object.entries(ends)) {
    if (end.outcome !== 'unfinished') continue;
    const last = [...plays].reverse().find((p) => p.hosts.includes(host) || p.results.some((r) => r.host === host));
    if (!last) continue;
    const m = out.get(last) ?? new Map<string, string>();
    m.set(host, end.reason ?? '');
    out.set(last, m);
  }
  return out;
}

/** Collects results from the bus; `done()` writes FILE (also when the run was interrupted). */
export function attachJUnit(bus: EventBus, file: string, cases: JUnitCases = 'host'): { done(): Promise<void> } {
  const plays: JUnitPlay[] = [];
  const problems: JUnitProblem[] = [];
  let current: JUnitPlay | undefined;
  let playbook = 'tsbm';
  let runStart: number | undefined;
  let totalMs: number | undefined;
  let ends: Record<string, HostEnd> = {};

  const playFor = (time: number): JUnitPlay => {
    if (!current) {
      // results without a play_start (should not happen) still get reported
      current = { name: 'tsbm', classname: playbook, hosts: [], startedAt: time, endedAt: time, results: [] };
      plays.push(current);
    }
    return current;
  };

  const off = bus.on((e: TsbmEvent) => {
    if (e.type === 'run_start') {
      runStart = e.time;
      playbook = basename(e.playbook);
    } else if (e.type === 'play_start') {
      current = { name: e.play, classname: `${playbook}/${e.play}`, hosts: [...e.hosts], startedAt: e.time, endedAt: e.time, results: [] };
      plays.push(current);
    } else if (e.type === 'host_result') {
      // not in the recap either (meta); an interrupted task counts nothing but is no pass
      if (e.counts && Object.keys(e.counts).length === 0 && e.status !== 'interrupted') return;
      const play = playFor(e.time - e.durationMs);
      play.endedAt = Math.max(play.endedAt, e.time);
      play.results.push({
        host: e.host,
        taskId: e.taskId,
        task: e.task,
        status: e.status,
        ...(e.msg ? { msg: e.msg } : {}),
        ...(e.item !== undefined ? { item: true } : {}),
        start: e.time - e.durationMs,
        end: e.time,
        durationMs: e.durationMs,
      });
    } else if (e.type === 'validation_error') {
      const where = e.pos ? `${e.pos.file}:${e.pos.line}:${e.pos.col}` : 'run';
      problems.push({ name: `${where}: ${e.message}`, line: problemLine(e), time: e.time });
    } else if (e.type === 'recap') ends = e.hosts ?? {};
    else if (e.type === 'run_end') totalMs = e.durationMs;
  });

  return {
    done: async () => {
      off();
      const total = totalMs ?? (runStart !== undefined ? Date.now() - runStart : 0);
      try {
        await writeFile(file, renderJUnit(plays, problems, total, cases, ends), 'utf8');
      } catch (e) {
        throw new TsbmError('runtime', `cannot write the JUnit file ${file}: ${(e as Error).message}`, {
          hint: 'check that the --junit directory exists and is writable',
        });
      }
    },
  };
}
