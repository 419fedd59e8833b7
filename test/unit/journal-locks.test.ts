import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockNodes } from '../helpers/node-locks.js';
import { type LockOwner, takeOverStale, writeOwnerRecord } from '../../src/util/lock-file.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'tsbm-locks-'));
  dirs.push(d);
  return d;
};

describe('node locks', () => {
  it('a second run cannot take a locked node and is told the holder run id', () => {
    const dir = tmp();
    const first = lockNodes(dir, ['n1', 'n2'], 'run-A');
    expect(() => lockNodes(dir, ['n3', 'n2'], 'run-B')).toThrow(/host n2 is locked by run run-A/);
    // all-or-nothing: n3 was released again
    expect(readdirSync(dir).sort()).toEqual(['n1.lock', 'n2.lock']);
    first.release();
    expect(readdirSync(dir)).toEqual([]);
    lockNodes(dir, ['n2'], 'run-B').release();
  });

  it('takes over a stale lock whose process is gone', () => {
    const dir = tmp();
    const dead = spawnSync('true').pid!; // exited already
    writeFileSync(join(dir, 'n1.lock'), JSON.stringify({ runId: 'old', pid: dead, machine: hostname(), time: 0 }));
    const l = lockNodes(dir, ['n1'], 'new');
    l.release();
    expect(existsSync(join(dir, 'n1.lock'))).toBe(false);
  });

  it("removes the owner record of a run killed before it linked its locks, never a live run's or another machine's", () => {
    const dir = tmp();
    const dead = spawnSync('true').pid!; // exited already
    // What a SIGKILL between writing the record and its `finally` leaves behind.
    writeFileSync(join(dir, `.${dead}.0a1b2c.owner`), JSON.stringify({ runId: 'killed', pid: dead, machine: hostname(), time: 0 }));
    const live = writeOwnerRecord(dir, { runId: 'taking', pid: process.pid, machine: hostname(), time: Date.now() });
    writeFileSync(join(dir, `.${dead}.3d4e5f.owner`), JSON.stringify({ runId: 'far', pid: dead, machine: 'elsewhere', time: 0 }));
    lockNodes(dir, ['n1'], 'next').release();
    expect(readdirSync(dir).sort()).toEqual([`.${dead}.3d4e5f.owner`, live.file.slice(dir.length + 1)].sort());
  });
});

describe('stale lock takeover', () => {
  const deadPid = () => spawnSync('true').pid!; // exited already

  it('a run that found the lock stale after another run took it over leaves the new lock alone', () => {
    const dir = tmp();
    const file = join(dir, 'n1.lock');
    const stale: LockOwner = { runId: 'old', pid: deadPid(), machine: hostname(), time: 0 };
    writeFileSync(file, JSON.stringify(stale));
    // Runs A and B both read the stale lock; A replaces it first.
    const a = lockNodes(dir, ['n1'], 'run-A');
    const b = writeOwnerRecord(dir, { runId: 'run-B', pid: process.pid, machine: hostname(), time: Date.now() });
    const holder = takeOverStale(file, stale, b);
    rmSync(b.file);
    expect(holder?.runId).toBe('run-A');
    expect(JSON.parse(readFileSync(file, 'utf8')).runId).toBe('run-A');
    expect(() => lockNodes(dir, ['n1'], 'run-C')).toThrow(/host n1 is locked by run run-A/);
    a.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a breaker that died mid-way does not block the takeover; a live one is waited for', () => {
    const dir = tmp();
    const file = join(dir, 'n1.lock');
    const stale: LockOwner = { runId: 'old', pid: deadPid(), machine: hostname(), time: 0 };
    writeFileSync(file, JSON.stringify(stale));
    writeFileSync(`${file}.break`, JSON.stringify({ ...stale, runId: 'breaker' }));
    mkdirSync(join(dir, 'records')); // the record elsewhere: the lock directory holds only locks
    const me = writeOwnerRecord(join(dir, 'records'), { runId: 'run-B', pid: process.pid, machine: hostname(), time: Date.now() });
    expect(takeOverStale(file, stale, me)).toBeUndefined();
    expect(JSON.parse(readFileSync(file, 'utf8')).runId).toBe('run-B');
    expect(readdirSync(dir).sort()).toEqual(['n1.lock', 'records']);
    rmSync(file);

    // A live breaker (this process, as another run) holds it: after waiting, the stale lock
    // is still there and named, never removed behind the breaker's back.
    writeFileSync(file, JSON.stringify(stale));
    writeFileSync(`${file}.break`, JSON.stringify({ ...me.owner, runId: 'breaker' }));
    const started = Date.now();
    expect(takeOverStale(file, stale, me)?.runId).toBe('old');
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(readdirSync(dir).sort()).toEqual(['n1.lock', 'n1.lock.break', 'records']);
  });
});

describe('node locks under contention', () => {
  it('two runs never hold the same node at once (a lock is never seen half-written)', () => {
    const dir = tmp();
    const held = join(dir, 'held');
    // Each worker takes the lock, proves it is alone with an exclusive marker file, lets go.
    const script = `
      import { takeFileLocks } from ${JSON.stringify(join(import.meta.dirname, '../../dist/nodes/file-locks.js'))};
      import { openSync, closeSync, unlinkSync } from 'node:fs';
      let doubles = 0;
      for (let i = 0; i < 300; i++) {
        let l;
        try { l = takeFileLocks(${JSON.stringify(dir)}, [{ host: 'n1', key: 'n1' }], 'run-' + process.pid); } catch { continue; }
        try { closeSync(openSync(${JSON.stringify(held)}, 'wx')); unlinkSync(${JSON.stringify(held)}); } catch { doubles++; }
        l.release();
      }
      console.log(doubles);`;
    const runs = Array.from({ length: 4 }, () =>
      import('node:child_process').then(({ spawn }) =>
        new Promise<number>((resolve) => {
          const c = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
          let out = '';
          c.stdout.on('data', (d: Buffer) => (out += d));
          c.on('close', () => resolve(Number(out.trim())));
        }),
      ),
    );
    return Promise.all(runs).then((doubles) => expect(doubles).toEqual([0, 0, 0, 0]));
  }, 60_000);
});

describe('one owner record per run', () => {
  it('every lock of a run is a link to one record, whose own name is gone once they are taken', async () => {
    const { statSync } = await import('node:fs');
    const dir = tmp();
    const l = lockNodes(dir, ['n1', 'n2', 'n3'], 'run-A');
    expect(readdirSync(dir).sort()).toEqual(['n1.lock', 'n2.lock', 'n3.lock']);
    const inodes = new Set(['n1', 'n2', 'n3'].map((h) => statSync(join(dir, `${h}.lock`)).ino));
    expect(inodes.size).toBe(1);
    expect(statSync(join(dir, 'n1.lock')).nlink).toBe(3);
    expect(JSON.parse(readFileSync(join(dir, 'n2.lock'), 'utf8'))).toMatchObject({ runId: 'run-A', pid: process.pid });
    // A refused run leaves neither locks nor its record behind.
    expect(() => lockNodes(dir, ['n4', 'n1'], 'run-B')).toThrow(/host n1 is locked by run run-A/);
    expect(readdirSync(dir).sort()).toEqual(['n1.lock', 'n2.lock', 'n3.lock']);
    l.release();
    expect(readdirSync(dir)).toEqual([]);
  });
});
