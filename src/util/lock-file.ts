// Lock files with an owner (pid, process start time, machine, run): the one mechanism behind
// node locks (nodes/file-locks.ts) and the image cache's download locks (images/lock.ts). A lock
// is a hard link to the owner's record, written whole first, so a lock that exists is always
// complete; a lock whose owner process is gone on this machine, or whose pid now belongs to a
// process started later, is stale and taken over (by one taker only).
import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, openSync, readdirSync, readFileSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { processAlive } from './process-alive.js';

export interface LockOwner {
  runId: string;
  pid: number;
  machine: string;
  time: number;
  /** The owner process's start time (Linux /proc), so a pid reused after a crash is not mistaken for the owner. */
  started?: string;
  /** A random id of this holding, the file node store's fencing token: the lock is still ours while it carries it. */
  token?: string;
}

/** Start time of a process in clock ticks since boot (field 22 of /proc/PID/stat); undefined off Linux. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** The holder's process is gone, or its pid now belongs to a process started later. */
function ownerGone(holder: LockOwner): boolean {
  if (holder.pid === -1 || !processAlive(holder.pid)) return true;
  if (!holder.started) return false;
  const now = processStart(holder.pid);
  return now !== undefined && now !== holder.started;
}

/** The run's owner record and where it is written (the name locks are linked from). */
export interface OwnerRecord {
  owner: LockOwner;
  file: string;
}

/**
 * Writes the run's owner record whole, once, under a private name in the lock directory. Every
 * lock the run takes is a hard link to it: link() fails if the lock exists, and a lock that
 * exists is always complete (open 'wx' then write let another run read an empty lock in
 * between, call it stale and take it too). One file for all hosts: a new file per host cost a
 * third of a second for a thousand hosts on some file systems.
 */
export function writeOwnerRecord(dir: string, owner: LockOwner): OwnerRecord {
  const file = join(dir, `.${process.pid}.${randomBytes(6).toString('hex')}.owner`);
  const fd = openSync(file, 'wx', 0o600);
  try {
    writeSync(fd, JSON.stringify(owner));
  } finally {
    closeSync(fd);
  }
  return { owner, file };
}

/** The owner recorded in a lock file; undefined when there is no lock (or it is not one tsbm wrote). */
export function readLockOwner(file: string): LockOwner | undefined {
  const r = linkOrRead(file, undefined);
  return r === 'vanished' || r === undefined || r.pid === -1 ? undefined : r;
}

/** Takes the lock, or returns its holder. */
function tryTake(file: string, me: OwnerRecord): LockOwner | undefined {
  // A holder that lets go between our failed link and our read leaves nothing to read: try
  // again, never call that stale (unlinking then would remove a newer holder's lock).
  for (let attempt = 0; ; attempt++) {
    const holder = linkOrRead(file, me);
    if (holder !== 'vanished') return holder;
    if (attempt >= 100) return { runId: 'unknown (lock kept changing hands)', pid: process.pid, machine: me.owner.machine, time: 0 };
  }
}

/** Links `me` in as the lock, or reads the lock's holder (`me` undefined: only reads). */
function linkOrRead(file: string, me: OwnerRecord | undefined): LockOwner | 'vanished' | undefined {
  if (me) {
    try {
      linkSync(me.file, file);
      return undefined;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'vanished';
    throw e;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  // A bare pid: an image lock written by an older tsbm on this machine.
  if (typeof parsed === 'number' && Number.isInteger(parsed) && parsed > 0) return { runId: 'unknown', pid: parsed, machine: hostname(), time: 0 };
  if (parsed && typeof parsed === 'object' && typeof (parsed as LockOwner).pid === 'number') return parsed as LockOwner;
  // Not a lock tsbm wrote (it writes them whole): treat as stale.
  return { runId: 'unknown', pid: -1, machine: hostname(), time: 0 };
}

const sameOwner = (a: LockOwner, b: LockOwner) =>
  a.runId === b.runId && a.pid === b.pid && a.machine === b.machine && a.started === b.started;

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Replaces a lock whose run died (`stale`, as read earlier) with ours; returns the holder when
 * that fails. Two runs can find the same stale lock: the first removes it and takes the lock,
 * and the second must not then remove that fresh lock. So the lock is removed only by the
 * holder of `<lock>.break`, after reading it again and finding it still the stale one.
 */
export function takeOverStale(file: string, stale: LockOwner, me: OwnerRecord): LockOwner | undefined {
  const breakFile = `${file}.break`;
  for (let attempt = 0; attempt < 50; attempt++) {
    const breaker = tryTake(breakFile, me);
    if (!breaker) {
      try {
        const now = linkOrRead(file, me);
        if (now === undefined) return undefined; // it went away and we linked ours in
        if (now === 'vanished' || !sameOwner(now, stale)) return tryTake(file, me);
        unlinkSync(file);
        return tryTake(file, me);
      } finally {
        rmSync(breakFile, { force: true });
      }
    }
    // A breaker that died in its few microseconds would block every later run: remove it
    // (another run may be doing the same: force).
    if (breaker.machine === me.owner.machine && ownerGone(breaker)) rmSync(breakFile, { force: true });
    else sleepMs(10); // another run is replacing it right now
  }
  return tryTake(file, me);
}

/** Takes the lock at `file` for `me`, taking over a stale one; else returns its live holder. */
export function takeLock(file: string, me: OwnerRecord): LockOwner | undefined {
  const holder = tryTake(file, me);
  if (holder && holder.machine === me.owner.machine && ownerGone(holder)) return takeOverStale(file, holder, me);
  return holder;
}

/** This process as a lock owner. */
export function ownerHere(runId: string): LockOwner {
  const started = processStart(process.pid);
  return { runId, pid: process.pid, machine: hostname(), time: Date.now(), ...(started ? { started } : {}) };
}

const OWNER_RECORD = /^\.\d+\.[0-9a-f]+\.owner$/;

/**
 * Removes owner records that a run killed between writing its record and linking its locks left
 * behind (SIGKILL skips the `finally` that removes them). Only records of this machine whose
 * process is gone: another machine's record, or one whose run is still taking its locks, stays.
 */
export function sweepOwnerRecords(dir: string, machine: string): void {
  for (const name of readdirSync(dir)) {
    if (!OWNER_RECORD.test(name)) continue;
    const file = join(dir, name);
    try {
      const rec = JSON.parse(readFileSync(file, 'utf8')) as LockOwner;
      if (rec.machine === machine && ownerGone(rec)) rmSync(file, { force: true });
    } catch {
      // removed by its run meanwhile, or cut short by the kill before any byte: left for now
    }
  }
}
