// The journal and --resume through the built CLI on controller-local hosts: a resume leaves a
// failed host failed, --retry-failed runs it again from the start with the done host still done;
// a changed playbook is refused unless --force; `tsbm runs list|show` read what was written, torn
// lines included; resuming with nothing recorded is a clear options error.
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliRun, runTsbm, locksLeft } from '../helpers/fault-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-journalcli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = { ...process.env, TSBM_LOCK_DIR: join(dir, 'locks') };
const runs = join(dir, 'runs');
const inventory = join(dir, 'inventory.yml');
const playbook = join(dir, 'site.yml');
writeFileSync(inventory, 'all:\n  hosts:\n    alpha:\n      connection: local\n    beta:\n      connection: local\n');
const PLAY = `- name: Steps
  hosts: all
  tasks:
    - name: Say hello
      command: echo hello-{{ inventory_hostname }}
      register: said
    - name: Count the runs
      shell: echo x >> ${dir}/count-{{ inventory_hostname }}
    - name: Need the flag
      command: test -e ${dir}/flag-{{ said.stdout }}
`;
writeFileSync(playbook, PLAY);

const tsbm = (args: string[]): Promise<CliRun> => runTsbm(args, { cwd: dir, env, timeoutMs: 60_000 });
const run = (extra: string[] = []) => tsbm(['run', playbook, '-i', inventory, '--output', 'json', '--journal-dir', runs, ...extra]);
const statuses = (r: CliRun, host: string) =>
  r.events.filter((e) => e.type === 'host_result' && e.host === host).map((e) => `${e.task}: ${e.status}`);
const lines = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8').trim().split('\n').length : 0);

describe('journal and --resume through the CLI', () => {
  it('resuming with nothing recorded is an options error, not a crash', async () => {
    const r = await run(['--resume', 'last']);
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/no runs recorded/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('a failed host stays failed on resume; --retry-failed runs it again from the start', async () => {
    writeFileSync(join(dir, 'flag-hello-beta'), '');
    const first = await run();
    expect(first.code).toBe(2);
    expect(statuses(first, 'alpha')).toEqual(['Say hello: changed', 'Count the runs: changed', 'Need the flag: failed']);
    expect(statuses(first, 'beta')).toEqual(['Say hello: changed', 'Count the runs: changed', 'Need the flag: changed']);

    writeFileSync(join(dir, 'flag-hello-alpha'), '');
    // A resume continues what was interrupted, nothing else: alpha failed, so it is not run.
    const second = await run(['--resume', 'last']);
    expect(second.code, second.stderr).toBe(2);
    expect(statuses(second, 'alpha')).toEqual([]);
    expect(second.events.find((e) => e.type === 'resume')).toMatchObject({ failed: { alpha: expect.stringMatching(/^failed in run .*: Need the flag: /) } });
    // beta had finished: it stays finished.
    expect(statuses(second, 'beta').every((s) => s.endsWith('skipped'))).toBe(true);

    const third = await run(['--resume', 'last', '--retry-failed']);
    expect(third.code, third.stderr).toBe(0);
    // alpha again from the start (as a retry file would run it); beta is still done.
    expect(statuses(third, 'alpha')).toEqual(['Say hello: changed', 'Count the runs: changed', 'Need the flag: changed']);
    expect(statuses(third, 'beta').every((s) => s.endsWith('skipped'))).toBe(true);
    expect(lines(join(dir, 'count-alpha'))).toBe(2);
    expect(lines(join(dir, 'count-beta'))).toBe(1);
    expect(locksLeft(join(dir, 'locks'))).toEqual([]);
  });

  it('runs list and runs show read the journals, a torn last line included', async () => {
    const list = await tsbm(['runs', 'list', '--journal-dir', runs, '--json']);
    expect(list.code, list.stderr).toBe(0);
    const summaries = JSON.parse(list.stdout) as { runId: string; finished: boolean; exitCode: number; resumedFrom?: string }[];
    expect(summaries.length).toBe(3);
    expect(summaries[1]!.resumedFrom).toBe(summaries[0]!.runId);
    expect(summaries[2]!.resumedFrom).toBe(summaries[1]!.runId);
    expect(summaries.map((s) => s.exitCode)).toEqual([2, 2, 0]);

    appendFileSync(join(runs, `${summaries[0]!.runId}.jsonl`), '{"type":"host_result","host":"al');
    const show = await tsbm(['runs', 'show', summaries[0]!.runId, '--journal-dir', runs]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(/alpha/);
    expect(show.stdout).toMatch(/Need the flag/);
    const last = await tsbm(['runs', 'show', 'last', '--journal-dir', runs, '--json']);
    expect(JSON.parse(last.stdout).header.runId).toBe(summaries[2]!.runId);
  });

  it('a changed playbook is refused on resume unless --force', async () => {
    writeFileSync(playbook, `${PLAY}    - name: One more\n      command: 'true'\n`);
    const refused = await run(['--resume', 'last']);
    expect(refused.code).toBe(5);
    expect(refused.stderr).toMatch(/the playbook .*changed since it ran/);
    expect(refused.stderr).toMatch(/--force/);
    expect(refused.events.filter((e) => e.type === 'host_task_start')).toEqual([]);
    const forced = await run(['--resume', 'last', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(statuses(forced, 'alpha').at(-1)).toBe('One more: changed');
    expect(lines(join(dir, 'count-alpha'))).toBe(2);
  });
});
