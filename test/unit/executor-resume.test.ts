// --resume continues what was interrupted, nothing else (issue 36 point 5), on journals the
// executor itself wrote: a host that failed stays failed and nothing is run on it (it was not
// powered on again), --retry-failed runs it again from the start of the play, and a cleanup
// (rescue) step of an earlier run is never "done" for a failure of this one. The resumed run
// says what it takes over in one `resume` event per play, not a line per task.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunHooks } from '../../src/executor/deps.js';
import { readJournal } from '../../src/journal/reader.js';
import { resumeStateFrom } from '../../src/journal/resume.js';
import type { TsbmEvent } from '../../src/output/events.js';
import { resumeLines } from '../../src/output/resume-lines.js';
import { fakeLab, ok } from '../helpers/fake-connection.js';
import { block, cmd, play, playbook, runModel } from '../helpers/executor-model.js';
import { journalHeader } from '../helpers/journal-header.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-resume-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** Writes a run's events as its journal and returns the hooks a resume of it gets. */
function journalOf(events: TsbmEvent[], resumedFrom?: string): { runId: string; file: string } {
  const runId = `20261202-1000${String(n).padStart(2, '0')}-${(0xa000 + n++).toString(16)}`;
  const file = join(dir, `${runId}.jsonl`);
  const records = [journalHeader(runId, resumedFrom ? { resumedFrom } : {}), ...events];
  writeFileSync(file, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return { runId, file };
}

function resumeHooks(file: string, retryFailed = false): RunHooks {
  const s = resumeStateFrom(readJournal(file), { check: false, retryFailed });
  return { completed: s.completed, restore: s.restore, resumedFrom: s.runId, staysFailed: s.staysFailed, restarts: s.restarts };
}

// The deploy's shape: power on, wait, pull, install in a block whose rescue powers off and fails;
// each node at its own pace (strategy free), as the shipped playbooks run. Built once: a resume
// knows tasks by their ids, which a rebuilt model would not share.
const DEPLOY = playbook(
  play(
    [
      block(
        { block: [cmd('power on'), cmd('wait'), cmd('pull'), cmd('install')], rescue: [cmd('power off'), cmd('report failure')] },
        { name: 'Deploy' },
      ),
    ],
    { strategy: 'free' },
  ),
);
const deploy = () => DEPLOY;

describe('resume: only what was interrupted', () => {
  it('a failed host stays failed (nothing powered on), --retry-failed deploys it from the start', async () => {
    // Run 1: node09's pull fails (its rescue powers it off); then the run is interrupted while node01 waits.
    const ac = new AbortController();
    let cleanedUp: () => void = () => {};
    const node09Done = new Promise<void>((res) => {
      cleanedUp = res;
    });
    const lab1 = fakeLab({
      respond: async (c) => {
        const line = c.argv.join(' ');
        if (c.host === 'node09' && line === 'pull') return { rc: 1, stdout: '', stderr: 'pull failed' };
        if (c.host === 'node09' && line === 'report failure') {
          cleanedUp();
          return { rc: 1, stdout: '', stderr: 'node powered off after the pull failed' };
        }
        if (c.host === 'node01' && line === 'wait') {
          await node09Done;
          ac.abort();
        }
        return ok();
      },
    });
    const inventory = { hosts: { node01: {}, node09: {} } };
    const r1 = await runModel(deploy(), { inventory, lab: lab1, signal: ac.signal });
    expect(r1.lab.argvs('node09')).toEqual(['power on', 'wait', 'pull', 'power off', 'report failure']);
    const j1 = journalOf(r1.events);

    // Run 2 resumes run 1: node01 goes on after its wait; node09 is not touched at all.
    const r2 = await runModel(deploy(), { inventory, hooks: resumeHooks(j1.file) });
    expect(r2.lab.argvs('node09')).toEqual([]);
    expect(r2.lab.argvs('node01')).toEqual(['pull', 'install']);
    expect(r2.code).toBe(2); // node09's failure is still the run's
    const recap = r2.events.find((e) => e.type === 'recap') as Extract<TsbmEvent, { type: 'recap' }>;
    expect(recap.hosts?.node09?.outcome).toBe('failed');
    expect(recap.hosts?.node09?.reason).toMatch(new RegExp(`^failed in run ${j1.runId}: report failure: `));
    expect(recap.hosts?.node01?.outcome).toBe('ok');
    // One line for the play, not a "done in the resumed run" line per task.
    const note = r2.events.find((e) => e.type === 'resume') as Extract<TsbmEvent, { type: 'resume' }>;
    expect(note).toMatchObject({ from: j1.runId, done: { node01: 2 } });
    expect(Object.keys(note.failed ?? {})).toEqual(['node09']);
    expect(resumeLines(note)).toEqual([
      `resumed: done in run ${j1.runId}, not run again: 2 tasks on node01`,
      `resumed: node09 stays failed (${note.failed!.node09}); --retry-failed runs it again from the start`,
    ]);
    const j2 = journalOf(r2.events, j1.runId);

    // Run 3 resumes run 2 with --retry-failed: node09 from the start (power on first), node01 is done.
    const r3 = await runModel(deploy(), { inventory, hooks: resumeHooks(j2.file, true) });
    expect(r3.lab.argvs('node09')).toEqual(['power on', 'wait', 'pull', 'install']);
    expect(r3.lab.argvs('node01')).toEqual([]);
    expect(r3.code).toBe(0);
    expect(r3.events.find((e) => e.type === 'resume')).toMatchObject({ restart: ['node09'], done: { node01: 4 } });

    // A resume of run 3 takes nothing from run 1 for node09: run 3 started it again.
    const j3 = journalOf(r3.events, j2.runId);
    const s = resumeStateFrom(readJournal(j3.file), { check: false });
    expect(s.staysFailed('node09')).toBeUndefined();
    expect(s.completed('node09', r3.resultOf('node09', 'install')!.taskId)).toBe(true);
  });

  it('a cleanup step of an earlier run is never done for a failure of this one', async () => {
    // Run 1: the flaky step fails and its rescue cleans up (and recovers); then the run is interrupted.
    const ac = new AbortController();
    const pb = playbook(play([block({ block: [cmd('flaky')], rescue: [cmd('clean up')] }, { name: 'Try' }), cmd('wait'), cmd('finish')]));
    const flaky = () => pb;
    const lab1 = fakeLab({
      respond: (c) => {
        const line = c.argv.join(' ');
        if (line === 'flaky') return { rc: 1, stdout: '', stderr: 'flaked' };
        if (line === 'wait') ac.abort();
        return ok();
      },
    });
    const inventory = { hosts: { node02: {} } };
    const r1 = await runModel(flaky(), { inventory, lab: lab1, signal: ac.signal });
    expect(r1.lab.argvs('node02')).toEqual(['flaky', 'clean up', 'wait']);
    const j1 = journalOf(r1.events);
    // Run 2: the flaky step fails again, so its cleanup runs again (it was not skipped as done).
    const lab2 = fakeLab({ respond: (c) => (c.argv.join(' ') === 'flaky' ? { rc: 1, stdout: '', stderr: 'flaked again' } : ok()) });
    const r2 = await runModel(flaky(), { inventory, lab: lab2, hooks: resumeHooks(j1.file) });
    expect(r2.lab.argvs('node02')).toEqual(['flaky', 'clean up', 'finish']);
    expect(r2.resultOf('node02', 'clean up')?.status).toBe('changed');
  });
});
