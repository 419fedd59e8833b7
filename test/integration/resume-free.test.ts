// --resume under strategy: free. The runner is killed (SIGKILL) while the nodes are at different
// tasks: node01's power changes take seconds, so it is still powering on when the others have
// installed; a resume takes each node on from its own first unfinished task: the fast ones do not
// install again, the slow one does not power off again, and every node ends deployed once.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJournal } from '../../src/journal/reader.js';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { type CliRun, DEPLOY, runTsbm, spawnTsbm, stateArgs, locksLeft } from '../helpers/fault-cli.js';

const INSTALL = 'Install the image to the root disk';
const CONFIGDRIVE = 'Write the config drive';
const POWER_ON = 'Power the node on';
const BOOT_DISK = 'Boot from disk from now on';

let dir: string;
let lab: Lab;
let state: ReturnType<typeof stateArgs>;
let killed: CliRun;
let resumed: CliRun;

const args = (extra: string[] = []) => ['run', DEPLOY, '-i', lab.inventory, '--output', 'json', ...state.args, ...extra];
const results = (r: CliRun, host: string) =>
  r.events.filter((e) => e.type === 'host_result' && e.host === host).map((e) => `${e.task}=${e.status}`);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-resume-free-'));
  lab = await startLab({ nodes: 3, dir: join(dir, 'lab'), bootDelayMs: 150, powerDelayMs: 30, faults: 'node01:power_delay=10000' });
  state = stateArgs(dir);
  const running = spawnTsbm(args(), { cwd: dir, env: state.env });
  // Killed once the fast nodes have set the boot to disk (so their config drive's result is in
  // the journal: it is made durable before each next step): node01 is still powering on.
  let buf = '';
  const wrote = new Set<string>();
  await new Promise<void>((ok) => {
    running.child.stdout!.on('data', (d: string) => {
      buf += d;
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const l of lines) {
        const e = JSON.parse(l) as { type: string; host?: string; task?: string };
        if (e.type === 'host_result' && e.task === BOOT_DISK && e.host) wrote.add(e.host);
      }
      if (wrote.has('node02') && wrote.has('node03')) ok();
    });
    void running.done.then(() => ok());
  });
  running.child.kill('SIGKILL');
  killed = await running.done;
  resumed = await runTsbm(args(['--resume', 'last']), { cwd: dir, env: state.env, timeoutMs: 120_000 });
}, 240_000);

afterAll(async () => {
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('--resume after a kill under strategy: free', () => {
  it('the kill found the nodes at different tasks', () => {
    expect(killed.signal).toBe('SIGKILL');
    for (const h of ['node02', 'node03']) expect(results(killed, h)).toContain(`${CONFIGDRIVE}=changed`);
    expect(results(killed, 'node01').some((r) => r.startsWith(`${INSTALL}=`))).toBe(false);
  });

  it('the resume takes each node on from its own first unfinished task, and all end deployed', async () => {
    expect(resumed.code, resumed.stderr).toBe(0);
    for (const h of ['node02', 'node03']) {
      // done before the kill: skipped as done, never run again
      expect(results(resumed, h)).toContain(`${INSTALL}=skipped`);
      expect(results(resumed, h)).toContain(`${CONFIGDRIVE}=skipped`);
      expect(results(resumed, h)).toContain('Power cycle into the installed system=changed');
    }
    expect(results(resumed, 'node01')).toContain(`${INSTALL}=changed`);
    expect(results(resumed, 'node01')).toContain('Power the node off=skipped');
    for (const n of lab.nodes) {
      expect((await n.diskLayout()).partitions.map((p) => p.name), n.cfg.name).toEqual(['EFI-SYSTEM', 'root', 'config-2']);
      expect(readFileSync(join(n.root, 'sim/bootc-count'), 'utf8').trim(), n.cfg.name).toBe('1');
    }
  });

  it('power-on (resume: rerun) runs again only on the node with ramdisk work left', () => {
    // ran (On already, or sent again): either way its registered identity is fresh
    expect(results(resumed, 'node01').filter((r) => r.startsWith(`${POWER_ON}=`))).toEqual([
      expect.stringMatching(/=(ok|changed)$/),
    ]);
    // node02 and node03 had no ramdisk work left: nothing waits for a ramdisk that is gone
    for (const h of ['node02', 'node03']) expect(results(resumed, h)).toContain(`${POWER_ON}=skipped`);
  });

  it('both journals read back, each node done in the resumed run, and no lock is left', async () => {
    const runs = readdirSync(join(dir, 'runs')).filter((f) => f.endsWith('.jsonl'));
    expect(runs).toHaveLength(2);
    for (const f of runs) expect(readJournal(join(dir, 'runs', f)).header).toBeDefined();
    const show = await runTsbm(['runs', 'show', 'last', '--journal-dir', join(dir, 'runs'), '--json'], { cwd: dir, env: process.env });
    expect(show.code, show.stderr).toBe(0);
    const hosts = JSON.parse(show.stdout).hosts as Array<{ host: string; state: string }>;
    expect(hosts.map((h) => [h.host, h.state]).sort()).toEqual([
      ['node01', 'done'],
      ['node02', 'done'],
      ['node03', 'done'],
    ]);
    const locks = join(dir, 'locks');
    expect(locksLeft(locks)).toEqual([]);
  });
});
