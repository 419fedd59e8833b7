// Node locks hold for the controller, whatever the directory, and for the machine, whatever its
// inventory name: a run started from another directory, or through an inventory that names the
// same BMC differently, is refused and told the holder's run id. Lock and journal directories
// are 0700 (existing ones tightened, someone else's refused), journal files 0600.
//
// The first test uses the real default store: ~/.local/state/tsbm/locks (here under a
// temporary XDG_STATE_HOME), or /var/lib/tsbm/locks when the tests run as root; its lock is
// keyed by a random loopback port, so it meets no other run's.
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lockDirFor } from '../../src/journal/lock-dir.js';
import { bmcLockKey } from '../../src/journal/node-key.js';
import { type CliRun, runTsbm, spawnTsbm } from '../helpers/fault-cli.js';

const root = mkdtempSync(join(tmpdir(), 'tsbm-nodelocks-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const port = 20_000 + Math.floor(Math.random() * 40_000);
const HOLD = `- name: Hold the node
  hosts: all
  gather_facts: false
  tasks:
    - name: Hold
      pause:
        seconds: 3
`;
const inventory = (hosts: Record<string, string>) =>
  `all:\n  hosts:\n${Object.entries(hosts)
    .map(([name, addr]) => `    ${name}:\n      connection: local\n      driver_info:\n        redfish_address: "${addr}"\n`)
    .join('')}`;

function workdir(name: string, hosts: Record<string, string>): string {
  const d = join(root, name);
  mkdirSync(d, { recursive: true });
  writeFileSync(join(d, 'hold.yml'), HOLD);
  writeFileSync(join(d, 'inv.yml'), inventory(hosts));
  return d;
}

const runIdIn = (dir: string) => readdirSync(join(dir, '.tsbm', 'runs'))[0]!.replace(/\.jsonl$/, '');

/** Starts a holding run in `dir` and resolves once its play holds the node. */
async function holder(dir: string, env: NodeJS.ProcessEnv) {
  const r = spawnTsbm(['run', 'hold.yml', '-i', 'inv.yml', '--output', 'plain'], { cwd: dir, env, timeoutMs: 60_000 });
  let out = '';
  r.child.stdout!.on('data', (d: string) => {
    out += d;
  });
  for (let i = 0; i < 600 && !out.includes('TASK [Hold]'); i++) await new Promise((res) => setTimeout(res, 50));
  expect(out).toContain('TASK [Hold]');
  return r;
}

const second = (dir: string, env: NodeJS.ProcessEnv): Promise<CliRun> =>
  runTsbm(['run', 'hold.yml', '-i', 'inv.yml', '--output', 'plain'], { cwd: dir, env, timeoutMs: 60_000 });

describe('node locks across directories and names', () => {
  it('two runs from two directories on one node: the second is refused, naming the first', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: join(root, 'state') };
    delete env.TSBM_LOCK_DIR;
    const lockDir = lockDirFor(undefined, { env, uid: process.getuid?.(), home: homedir() });
    const a = workdir('dir-a', { node01: `https://127.0.0.1:${port}` });
    const b = workdir('dir-b', { node01: `https://127.0.0.1:${port}` });
    const first = await holder(a, env);
    const lockFile = join(lockDir, `${encodeURIComponent(bmcLockKey(`127.0.0.1:${port}`)!)}.lock`);
    expect(existsSync(lockFile)).toBe(true);
    const r = await second(b, env);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain(`host node01 is locked by run ${runIdIn(a)}`);
    expect(r.stdout).not.toMatch(/^ok: \[node01\] Hold/m);
    expect((await first.done).code).toBe(0);
    expect(existsSync(lockFile)).toBe(false);
  }, 90_000);

  it('two inventory names for one BMC: one run holds both names, the other inventory is refused', async () => {
    const env = { ...process.env, TSBM_LOCK_DIR: join(root, 'shared-locks') };
    const a = workdir('names-a', { node01: `https://127.0.0.1:${port + 1}`, 'node01-bmc': `https://127.0.0.1:${port + 1}/redfish/v1/` });
    const b = workdir('names-b', { 'rack1-n1': `127.0.0.1:${port + 1}` });
    const first = await holder(a, env);
    const r = await second(b, env);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain(`host rack1-n1 is locked by run ${runIdIn(a)}`);
    expect(r.stdout).toContain(`BMC 127.0.0.1:${port + 1}`);
    const done = await first.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toMatch(/^ok: \[node01\] Hold/m);
    expect(done.stdout).toMatch(/^ok: \[node01-bmc\] Hold/m);
  }, 90_000);

  it('journal and lock directories are 0700 (an open one is tightened), journal files 0600; --lock-dir is used', async () => {
    const d = workdir('modes', { node01: `https://127.0.0.1:${port + 2}` });
    mkdirSync(join(d, '.tsbm', 'runs'), { recursive: true, mode: 0o755 });
    const lockDir = join(root, 'modes-locks', 'nested');
    const r = await runTsbm(['run', 'hold.yml', '-i', 'inv.yml', '-e', '{"x": 1}', '--lock-dir', lockDir, '--output', 'plain'], {
      cwd: d,
      env: { ...process.env, TSBM_LOCK_DIR: join(root, 'not-this-one') },
    });
    expect(r.code, r.stderr).toBe(0);
    const mode = (p: string) => statSync(p).mode & 0o777;
    expect(mode(join(d, '.tsbm', 'runs'))).toBe(0o700);
    expect(mode(lockDir)).toBe(0o700);
    expect(mode(join(root, 'modes-locks'))).toBe(0o700);
    expect(existsSync(join(root, 'not-this-one'))).toBe(false);
    const journal = readdirSync(join(d, '.tsbm', 'runs'))[0]!;
    expect(mode(join(d, '.tsbm', 'runs', journal))).toBe(0o600);
  }, 90_000);

  it.skipIf(process.getuid?.() !== 0)('a lock directory owned by another user is refused before anything runs', async () => {
    const d = workdir('theirs', { node01: `https://127.0.0.1:${port + 3}` });
    const lockDir = join(root, 'theirs-locks');
    mkdirSync(lockDir, { mode: 0o700 });
    chownSync(lockDir, 65534, 65534);
    const r = await runTsbm(['run', 'hold.yml', '-i', 'inv.yml', '--lock-dir', lockDir, '--output', 'plain'], { cwd: d, env: process.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/node lock directory .*theirs-locks belongs to uid 65534/);
    expect(r.stdout).not.toContain('TASK [Hold]');
  }, 60_000);
});
