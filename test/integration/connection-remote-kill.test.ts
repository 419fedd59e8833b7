// The command tsbm runs on a host to kill a timed-out or aborted command (killArgv) must kill its
// whole process group under every common /bin/sh. dash (Debian's and Ubuntu's /bin/sh) rejects
// `kill -KILL -- -PGID`; with that form only the top process died and a script's children (a
// `shell:` task's commands, a batch's steps) kept running on the host. Each shell here runs the
// exact argv tsbm sends, against a real process group made for the test.
import { spawn, spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { killArgv } from '../../src/connection/remote-pid.js';

/** Shells to try: the command for each, when the machine has it. */
const SHELLS: { name: string; argv: string[] }[] = [
  { name: 'dash', argv: ['dash'] },
  { name: 'bash', argv: ['bash'] },
  { name: 'busybox sh', argv: ['busybox', 'sh'] },
  { name: 'sh', argv: ['sh'] },
].filter((s) => spawnSync(s.argv[0]!, [...s.argv.slice(1), '-c', 'true']).status === 0);

const groups: number[] = [];
afterEach(() => {
  for (const g of groups.splice(0)) {
    try {
      process.kill(-g, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
});

/** States of the group's processes (`ps -g`: the session, which the detached child leads). */
const groupStates = (pgid: number): string[] =>
  spawnSync('ps', ['-o', 'stat=', '-g', String(pgid)], { encoding: 'utf8' }).stdout.split('\n').map((l) => l.trim()).filter(Boolean);

/** A member that is not a zombie (killed children wait for init to reap them). */
const groupAlive = (pgid: number): boolean => groupStates(pgid).some((st) => !st.startsWith('Z'));

/** A script that forks two children and waits, as a `shell:` task would: its own process group. */
async function scriptGroup(): Promise<{ pgid: number; exited: Promise<void> }> {
  const child = spawn('sh', ['-c', 'sleep 300 & sleep 301; wait'], { detached: true, stdio: 'ignore' });
  const pgid = child.pid!;
  groups.push(pgid);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  // Both children started (the group has three members).
  for (let i = 0; i < 100 && groupStates(pgid).length < 3; i++) await new Promise((r) => setTimeout(r, 20));
  return { pgid, exited };
}

describe('killing a remote command kills its process group', () => {
  it('finds at least dash or bash here', () => {
    expect(SHELLS.map((s) => s.name)).toEqual(expect.arrayContaining([expect.stringMatching(/dash|bash/)]));
  });

  for (const shell of SHELLS) {
    it(`${shell.name}: the script and both of its children are gone`, async () => {
      const { pgid, exited } = await scriptGroup();
      const [, ...rest] = killArgv({ pid: pgid, pgid });
      const r = spawnSync(shell.argv[0]!, [...shell.argv.slice(1), ...rest], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      await exited;
      let alive = true;
      for (let i = 0; i < 100 && alive; i++) {
        alive = groupAlive(pgid);
        if (alive) await new Promise((res) => setTimeout(res, 20));
      }
      expect(alive, `a child of the killed script survived under ${shell.name}`).toBe(false);
    });
  }
});
