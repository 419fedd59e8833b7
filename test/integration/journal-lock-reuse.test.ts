// Stale lock detection on the lock files themselves: a lock whose pid is alive but belongs to a
// process started after the lock was written (pid reuse after a crash) is stale; a live owner
// still holds, and the refusal names its run id.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lockNodes } from '../helpers/node-locks.js';
import { processStart } from '../../src/util/lock-file.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-lockreuse-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lockOf = (host: string, owner: object) => writeFileSync(join(dir, `${host}.lock`), JSON.stringify(owner));

describe.skipIf(processStart(process.pid) === undefined)('node locks and pid reuse (needs /proc)', () => {
  it('records the owner process start time', () => {
    const l = lockNodes(dir, ['n1'], 'run-a');
    expect(JSON.parse(readFileSync(join(dir, 'n1.lock'), 'utf8')).started).toBe(processStart(process.pid));
    l.release();
  });

  it('a live pid with a different start time is a reused pid: the lock is taken over', () => {
    lockOf('n2', { runId: 'run-dead', pid: process.pid, machine: hostname(), time: 1, started: '1' });
    const l = lockNodes(dir, ['n2'], 'run-b');
    expect(JSON.parse(readFileSync(join(dir, 'n2.lock'), 'utf8')).runId).toBe('run-b');
    l.release();
  });

  it('a live owner with the same start time holds; the refusal names its run id', () => {
    lockOf('n3', { runId: 'run-live', pid: process.pid, machine: hostname(), time: 1, started: processStart(process.pid) });
    expect(() => lockNodes(dir, ['n3'], 'run-c')).toThrow(/locked by run run-live/);
  });

  it('an old lock without a start time falls back to the pid check', () => {
    lockOf('n4', { runId: 'run-old', pid: process.pid, machine: hostname(), time: 1 });
    expect(() => lockNodes(dir, ['n4'], 'run-d')).toThrow(/locked by run run-old/);
  });
});
