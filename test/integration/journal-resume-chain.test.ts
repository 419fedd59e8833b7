// Resume state across a chain of resumed runs, on journal files written to a temp directory:
// a resumed run killed before it re-recorded a host's done tasks must not make the next resume
// forget them (that re-ran bootc on a deployed node before the fix); a later failure reopens a
// task; a torn last line and a header-less journal (killed at start) are tolerated.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { journalHeader } from '../helpers/journal-header.js';
import { readJournal, resolveRun } from '../../src/journal/reader.js';
import { resumeChain, resumeStateFrom } from '../../src/journal/resume.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-chain-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const header = (runId: string, resumedFrom?: string) => journalHeader(runId, resumedFrom ? { resumedFrom } : {});
const result = (host: string, taskId: string, status: string, vars?: Record<string, unknown>) => ({
  type: 'host_result',
  time: 1,
  host,
  task: taskId,
  taskId,
  status,
  changed: status === 'changed',
  durationMs: 1,
  ...(vars ? { vars } : {}),
});

function write(runId: string, records: object[], tail = ''): string {
  const file = join(dir, `${runId}.jsonl`);
  writeFileSync(file, records.map((r) => `${JSON.stringify(r)}\n`).join('') + tail);
  return file;
}

describe('resume across a chain of resumed runs', () => {
  const r1 = '20261130-010000-aaaa';
  const r2 = '20261130-010100-bbbb';
  const r3 = '20261130-010200-cccc';
  write(r1, [
    header(r1),
    result('h1', 'pull', 'changed', { pulled: { digest: 'sha256:1' } }),
    result('h1', 'install', 'changed', { installed: { ok: true } }),
    result('h2', 'pull', 'changed'),
    result('h2', 'install', 'failed'),
  ]);
  // Killed while h1 waited for its ramdisk: it never got as far as re-recording pull/install.
  write(r2, [header(r2, r1), result('h1', 'power', 'ok', { power: { state: 'On' } }), result('h2', 'pull', 'failed')], '{"type":"host_res');
  const f3 = write(r3, [header(r3, r2)]);

  it('a task done in any earlier run of the chain stays done', () => {
    const s = resumeStateFrom(readJournal(f3), { check: false });
    expect(s.completed('h1', 'pull')).toBe(true);
    expect(s.completed('h1', 'install')).toBe(true);
    expect(s.completed('h1', 'power')).toBe(true);
  });

  it('a later failure reopens a task; a failed task stays open', () => {
    const s = resumeStateFrom(readJournal(f3), { check: false });
    expect(s.completed('h2', 'pull')).toBe(false);
    expect(s.completed('h2', 'install')).toBe(false);
  });

  it('variables come back from every run, later ones on top', () => {
    const v = resumeStateFrom(readJournal(f3), { check: false }).restore('h1');
    expect(v).toEqual({ pulled: { digest: 'sha256:1' }, installed: { ok: true }, power: { state: 'On' } });
  });

  it('the chain is oldest first and a torn last line is skipped, not fatal', () => {
    const chain = resumeChain(readJournal(f3));
    expect(chain.map((j) => j.header?.runId)).toEqual([r1, r2, r3]);
    expect(chain[1]!.badLines).toBe(1);
  });

  it('a missing link ends the chain quietly; a loop does not spin', () => {
    const lone = '20261130-020000-dddd';
    const f = write(lone, [header(lone, '20261130-000000-ffff'), result('h1', 'x', 'ok')]);
    expect(resumeChain(readJournal(f)).length).toBe(1);
    const a = '20261130-030000-0a0a';
    const b = '20261130-030100-0b0b';
    write(a, [header(a, b)]);
    const fb = write(b, [header(b, a)]);
    expect(resumeChain(readJournal(fb)).map((j) => j.header?.runId)).toEqual([a, b]);
  });

  it('a task done in check mode is never done for a real run, nor the reverse', () => {
    const c = '20261130-050000-c0c0';
    const r = '20261130-050100-d0d0';
    write(c, [{ ...header(c), options: { check: true } }, result('h1', 'power-off', 'changed')]);
    const fr = write(r, [header(r, c), result('h1', 'eject', 'ok')]);
    const real = resumeStateFrom(readJournal(fr), { check: false });
    expect(real.completed('h1', 'power-off')).toBe(false);
    expect(real.completed('h1', 'eject')).toBe(true);
    const check = resumeStateFrom(readJournal(fr), { check: true });
    expect(check.completed('h1', 'power-off')).toBe(true);
    expect(check.completed('h1', 'eject')).toBe(false);
  });

  it('--resume last skips a journal killed before its header was written', () => {
    const sub = mkdtempSync(join(dir, 'last-'));
    const ok = '20261130-040000-1111';
    writeFileSync(join(sub, `${ok}.jsonl`), `${JSON.stringify(header(ok))}\n`);
    writeFileSync(join(sub, '20261130-040100-2222.jsonl'), '');
    expect(resolveRun(sub, 'last')).toBe(join(sub, `${ok}.jsonl`));
  });
});
