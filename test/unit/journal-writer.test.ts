import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { journalHeader } from '../helpers/journal-header.js';
import { hostProgress, listRuns, readJournal, resolveRun } from '../../src/journal/reader.js';
import type { JournalHeader } from '../../src/journal/records.js';
import { newRunId } from '../../src/journal/run-id.js';
import { Journal } from '../../src/journal/writer.js';
import type { TsbmEvent } from '../../src/output/events.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'tsbm-journal-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const result = (host: string, task: string, status: 'ok' | 'failed'): TsbmEvent => ({
  type: 'host_result',
  time: 1,
  host,
  task,
  taskId: `p.yml:${task.length}:1`,
  status,
  changed: false,
  durationMs: 1,
  ...(status === 'failed' ? { msg: 'boom' } : {}),
});

describe('journal', () => {
  it('writes JSON lines that read back, and a torn last line is tolerated', async () => {
    const dir = tmp();
    const id = newRunId();
    const j = new Journal(dir, id);
    j.append({ type: 'journal_start', time: 1, runId: id, version: '0', playbook: '/p.yml', playbookHash: 'h', inventories: [], inventoryHash: 'i', options: {} });
    j.append(result('n1', 'Power off', 'ok'));
    j.append(result('n2', 'Power off', 'failed'));
    await j.barrier();
    await j.close();
    appendFileSync(j.file, '{"type":"host_res'); // crash mid-write
    const back = readJournal(j.file);
    expect(back.header?.runId).toBe(id);
    expect(back.records).toHaveLength(3);
    expect(back.badLines).toBe(1);
    const progress = hostProgress(back.records);
    expect(progress.map((p) => [p.host, p.stats.ok, p.stats.failed])).toEqual([
      ['n1', 1, 0],
      ['n2', 0, 1],
    ]);
    expect(progress[1]!.failures[0]).toEqual({ task: 'Power off', msg: 'boom' });
  });

  it('resolves `last` and unique prefixes, and explains unknown ids', async () => {
    const dir = tmp();
    const a = new Journal(dir, '20261130-010000-aaaa');
    const b = new Journal(dir, '20261130-020000-bbbb');
    await a.close();
    await b.close();
    expect(listRuns(dir).map((r) => r.runId)).toEqual(['20261130-010000-aaaa', '20261130-020000-bbbb']);
    expect(resolveRun(dir, 'last')).toBe(b.file);
    expect(resolveRun(dir, '20261130-01')).toBe(a.file);
    expect(() => resolveRun(dir, 'nope')).toThrow(/no run "nope".*|recent runs/);
  });

  it('orders runs that started within the same second by their start time, not their random suffix', async () => {
    const dir = tmp();
    const header = (runId: string, time: number): JournalHeader => journalHeader(runId, { time });
    const first = new Journal(dir, '20261130-010000-ffff');
    first.append(header('20261130-010000-ffff', 1_000));
    const second = new Journal(dir, '20261130-010000-0000');
    second.append(header('20261130-010000-0000', 1_400));
    await first.close();
    await second.close();
    expect(listRuns(dir).map((r) => r.runId)).toEqual(['20261130-010000-ffff', '20261130-010000-0000']);
    expect(resolveRun(dir, 'last')).toBe(second.file);
  });

  it('gathers the records of one event-loop turn into one write; a barrier, close or exit writes them at once', async () => {
    const dir = tmp();
    const j = new Journal(dir, newRunId());
    const lines = () => readFileSync(j.file, 'utf8').split('\n').filter(Boolean).length;
    for (let i = 0; i < 50; i++) j.append(result(`n${i}`, 'Power off', 'ok'));
    expect(lines()).toBe(0); // not one write per record
    await new Promise((r) => setImmediate(r));
    expect(lines()).toBe(50); // written at the end of the turn
    j.append(result('n50', 'Power off', 'ok'));
    const first = j.barrier();
    j.append(result('n51', 'Power off', 'ok')); // while the fsync runs
    await first;
    await j.barrier();
    expect(lines()).toBe(52);
    j.append(result('n52', 'Power off', 'ok'));
    await j.close();
    expect(lines()).toBe(53);
    // A process that exits before the turn ends still leaves its records.
    const file = join(dir, 'exit.jsonl');
    const script = [
      `import { Journal } from ${JSON.stringify(join(process.cwd(), 'dist/journal/writer.js'))};`,
      `const j = new Journal(${JSON.stringify(dir)}, 'exit');`,
      "j.append({ type: 'log', time: 1, level: 1, message: 'last words' });",
      'process.exit(3);',
    ].join('\n');
    expect(() => execFileSync(process.execPath, ['--input-type=module', '-e', script], { stdio: 'pipe' })).toThrow();
    expect(readFileSync(file, 'utf8')).toContain('last words');
  });

  it.skipIf(process.getuid?.() !== 0)('disk full (root: needs a tiny tmpfs) fails the barrier with a clear message', async () => {
    const dir = tmp();
    const mnt = join(dir, 'mnt');
    mkdirSync(mnt);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', mnt]);
    try {
      const j = new Journal(mnt, newRunId());
      const big = 'x'.repeat(4096);
      for (let i = 0; i < 10; i++) j.append({ type: 'log', time: 1, level: 1, message: big });
      await expect(j.barrier()).rejects.toThrow(/no space left on the device/);
      expect(j.error?.hint).toMatch(/stopped before doing remote work/);
      await j.close().catch(() => undefined);
    } finally {
      execFileSync('umount', [mnt]);
    }
  });
});
