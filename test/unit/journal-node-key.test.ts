// Node locks are keyed by the machine: one BMC written three ways is one key; hosts without a
// BMC are their SSH address; the lock store is per controller (per user, or the system's for
// root) unless set; lock and journal directories are 0700 and ours.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockDirFor, SYSTEM_LOCK_DIR } from '../../src/journal/lock-dir.js';
import { lockNodes } from '../helpers/node-locks.js';
import { bmcLockKey, describeKey, localLockKey, sshLockKey } from '../../src/journal/node-key.js';
import { ensurePrivateDir } from '../../src/journal/private-dir.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'tsbm-nodekey-'));
  dirs.push(d);
  return d;
};

describe('node identity', () => {
  it('one BMC written three ways is one key', () => {
    const forms = ['10.0.0.5', 'https://10.0.0.5', 'https://10.0.0.5:443/', 'HTTPS://10.0.0.5:443/redfish/v1', ' 10.0.0.5:443 '];
    expect(new Set(forms.map(bmcLockKey))).toEqual(new Set(['bmc:10.0.0.5:443']));
    expect(bmcLockKey('BMC-1.Example.com.')).toBe('bmc:bmc-1.example.com:443');
    expect(bmcLockKey('http://10.0.0.5')).toBe('bmc:10.0.0.5:80');
    expect(bmcLockKey('https://10.0.0.5:8443')).toBe('bmc:10.0.0.5:8443');
    expect(bmcLockKey('[fe80::1]')).toBe('bmc:[fe80::1]:443');
    expect(bmcLockKey('')).toBeUndefined();
    expect(bmcLockKey('ftp://x')).toBeUndefined();
  });

  it('SSH and local keys', () => {
    expect(sshLockKey('Node1.lab', 22)).toBe('ssh:node1.lab:22');
    expect(sshLockKey('::1', 2222)).toBe('ssh:[::1]:2222');
    expect(sshLockKey('[::1]', 2222)).toBe('ssh:[::1]:2222');
    expect(localLockKey('alpha')).toBe('local:alpha');
    expect(describeKey('bmc:10.0.0.5:443')).toBe('BMC 10.0.0.5:443');
    expect(describeKey('local:alpha')).toBe('');
  });
});

describe('where locks live', () => {
  const home = '/home/op';
  it('flag, then TSBM_LOCK_DIR, then the system directory for root, then XDG_STATE_HOME, then ~/.local/state', () => {
    expect(lockDirFor('/shared/locks', { env: { TSBM_LOCK_DIR: '/env/locks' }, uid: 1000, home })).toBe('/shared/locks');
    expect(lockDirFor(undefined, { env: { TSBM_LOCK_DIR: '/env/locks' }, uid: 0, home })).toBe('/env/locks');
    expect(lockDirFor(undefined, { env: { XDG_STATE_HOME: '/xdg' }, uid: 0, home })).toBe(SYSTEM_LOCK_DIR);
    expect(lockDirFor(undefined, { env: { XDG_STATE_HOME: '/xdg' }, uid: 1000, home })).toBe('/xdg/tsbm/locks');
    expect(lockDirFor(undefined, { env: { XDG_STATE_HOME: 'relative' }, uid: 1000, home })).toBe('/home/op/.local/state/tsbm/locks');
    expect(lockDirFor(undefined, { env: {}, uid: 1000, home })).toBe('/home/op/.local/state/tsbm/locks');
    expect(lockDirFor('  ', { env: { TSBM_LOCK_DIR: ' ' }, uid: 1000, home })).toBe('/home/op/.local/state/tsbm/locks');
  });
});

describe('private directories', () => {
  const mode = (p: string) => statSync(p).mode & 0o777;
  it('are created 0700, parents included, and existing open ones are tightened', () => {
    const base = tmp();
    const d = join(base, 'state', 'tsbm', 'locks');
    ensurePrivateDir(d, 'node lock directory');
    expect(mode(d)).toBe(0o700);
    expect(mode(join(base, 'state', 'tsbm'))).toBe(0o700);
    const open = join(base, 'open');
    mkdirSync(open);
    chmodSync(open, 0o777);
    ensurePrivateDir(open, 'run journal directory');
    expect(mode(open)).toBe(0o700);
  });

  it.skipIf(process.getuid?.() !== 0)('one owned by another user is refused, with what to do', () => {
    const d = join(tmp(), 'theirs');
    mkdirSync(d, { mode: 0o700 });
    // chown needs root: hand it to nobody
    chownSync(d, 65534, 65534);
    expect(() => ensurePrivateDir(d, 'node lock directory')).toThrow(/node lock directory .* belongs to uid 65534.*\(uid 0\)/);
  });

  it('a file where the directory should be is refused', () => {
    const base = tmp();
    const f = join(base, 'f');
    writeFileSync(f, '');
    expect(() => ensurePrivateDir(f, 'run journal directory')).toThrow();
  });
});

describe('locks by node', () => {
  it('two inventory names of one BMC collide across runs and share one lock within a run', () => {
    const dir = tmp();
    const key = bmcLockKey('10.0.0.5')!;
    const a = lockNodes(dir, [{ host: 'node01', key }, { host: 'blade-1', key: bmcLockKey('https://10.0.0.5:443/')! }], 'run-A');
    expect(readdirSync(dir)).toEqual([`${encodeURIComponent(key)}.lock`]);
    expect(() => lockNodes(dir, [{ host: 'rack1-n1', key: bmcLockKey('https://10.0.0.5')! }], 'run-B')).toThrow(
      /host rack1-n1 is locked by run run-A \(pid \d+; BMC 10\.0\.0\.5:443\)/,
    );
    a.release();
    expect(readdirSync(dir)).toEqual([]);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});
