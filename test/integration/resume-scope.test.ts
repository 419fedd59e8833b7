// A resume is the same run, continued, on a 4-node simulated lab: a deploy limited to node01 and
// interrupted is resumed without -l and touches only node01; the interrupted run never shows
// node01 as done; a check-mode undeploy resumes in check mode (node01 stays on); options that
// would change the run are refused (exit 5) naming the difference; `runs list` shows limit
// and mode.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { type CliRun, DEPLOY, ROOT, runTsbm, spawnTsbm, stateArgs } from '../helpers/fault-cli.js';

const UNDEPLOY = join(ROOT, 'playbooks', 'undeploy.yml');
let POWER_ON = '';
let lab: Lab;
let dir = '';
let state: ReturnType<typeof stateArgs>;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-resume-scope-'));
  lab = await startLab({ nodes: 4, dir, bootDelayMs: 400, powerDelayMs: 30 });
  state = stateArgs(dir);
  POWER_ON = join(dir, 'power-on.yml');
  writeFileSync(POWER_ON, '- hosts: all\n  gather_facts: false\n  tasks:\n    - name: Power on\n      redfish_power:\n        state: "on"\n');
}, 120_000);
afterAll(async () => {
  await lab?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const tsbm = (args: string[]): Promise<CliRun> => runTsbm([...args, '--output', 'json', ...state.args], { cwd: dir, env: state.env });
const hostsIn = (r: CliRun) => new Set(r.events.filter((e) => e.type === 'host_result').map((e) => e.host));
const power = async (i: number) => (await lab.nodes[i]!.status()).power;

/** node02..node04 as a fresh lab leaves them: off, no boot override, no media, blank disk. */
async function untouched(): Promise<void> {
  for (const n of lab.nodes.slice(1)) {
    const s = await n.status();
    expect({ power: s.power, boot: s.bootOverride, media: s.media ?? '' }, n.cfg.name).toEqual({ power: 'Off', boot: 'None/Disabled', media: '' });
    expect((await n.diskLayout()).partitions, n.cfg.name).toEqual([]);
  }
}

describe('--resume keeps the run scope', () => {
  it('a deploy limited to node01, interrupted, resumes on node01 only, and was never "done"', async () => {
    const first = spawnTsbm(['run', DEPLOY, '-i', lab.inventory, '-l', 'node01', '--output', 'json', ...state.args], { cwd: dir, env: state.env });
    let seen = '';
    let sent = false;
    first.child.stdout!.on('data', (d: string) => {
      seen = (seen + d).slice(-4096);
      if (!sent && seen.includes('"task":"Wait for the ramdisk')) {
        sent = true;
        first.child.kill('SIGINT');
      }
    });
    const r1 = await first.done;
    expect(sent).toBe(true);
    expect(r1.code, r1.stderr).toBe(99);
    expect([...hostsIn(r1)]).toEqual(['node01']);

    const show = await runTsbm(['runs', 'show', 'last', '--json', ...state.args], { cwd: dir, env: state.env });
    const progress = JSON.parse(show.stdout) as { hosts: { host: string; state: string; stats: { ok: number } }[] };
    expect(progress.hosts.map((h) => h.host)).toEqual(['node01']);
    expect(progress.hosts[0]!.stats.ok).toBeLessThan(13);
    expect(progress.hosts[0]!.state).toBe('unfinished');
    const text = await runTsbm(['runs', 'show', 'last', ...state.args], { cwd: dir, env: state.env });
    expect(text.stdout).toMatch(/^node01\s+unfinished\s/m);
    expect(text.stdout).toMatch(/limit node01 {2}mode normal/);

    const r2 = await tsbm(['run', DEPLOY, '-i', lab.inventory, '--resume', 'last']);
    expect(r2.code, r2.stderr).toBe(0);
    expect([...hostsIn(r2)]).toEqual(['node01']);
    expect(r2.events.some((e) => e.type === 'warning' && /with its options: --limit "node01"/.test(String(e.message)))).toBe(true);
    expect((await lab.nodes[0]!.diskLayout()).partitions.map((p) => p.name)).toEqual(['EFI-SYSTEM', 'root', 'config-2']);
    await untouched();

    const list = await runTsbm(['runs', 'list', '--json', ...state.args], { cwd: dir, env: state.env });
    const runs = JSON.parse(list.stdout) as { limit?: string; mode: string; exitCode: number }[];
    expect(runs.map((r) => [r.limit, r.mode, r.exitCode])).toEqual([
      ['node01', 'normal', 99],
      ['node01', 'normal', 0],
    ]);
  }, 180_000);

  it('a check-mode undeploy resumes in check mode: nothing is powered off', async () => {
    // node03 on, so a resume that forgot the limit or the mode would show on it too.
    const on = await tsbm(['run', POWER_ON, '-i', lab.inventory, '-l', 'node03']);
    expect(on.code, on.stderr).toBe(0);
    // Power, boot override and media of every node (the boot phase moves on by itself).
    const snapshot = async () =>
      Promise.all(lab.nodes.map(async (n) => (({ power, bootOverride, media }) => ({ power, bootOverride, media }))(await n.status())));
    const before = await snapshot();
    expect([before[0]!.power, before[2]!.power]).toEqual(['On', 'On']);

    // Without the disk erase: in check mode no ramdisk boots, so there is none to erase from.
    const noErase = ['-e', 'undeploy_erase_disk=false'];
    const check = await tsbm(['run', UNDEPLOY, '-i', lab.inventory, '-l', 'node01', '--check', ...noErase]);
    expect(check.code, check.stderr).toBe(0);
    const resumed = await tsbm(['run', UNDEPLOY, '-i', lab.inventory, '--resume', 'last', ...noErase]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.events.find((e) => e.type === 'run_start')?.options).toMatchObject({ check: true, limit: 'node01' });
    expect([...hostsIn(resumed)]).toEqual(['node01']);
    expect(await snapshot()).toEqual(before);

    const list = await runTsbm(['runs', 'list', ...state.args], { cwd: dir, env: state.env });
    expect(list.stdout.trim().split('\n').at(-1)).toMatch(/\snode01\s+check\s+exit 0 \(resumed /);
  }, 120_000);

  it('options that would change the run are refused, each named, and nothing runs', async () => {
    const other = await tsbm(['run', UNDEPLOY, '-i', lab.inventory, '--resume', 'last', '-l', 'node02', '--diff']);
    expect(other.code).toBe(5);
    expect(other.stderr).toMatch(/cannot resume run \S+ with other options: --limit "node02" \(the run had "node01"\); --diff/);
    expect(other.events.filter((e) => e.type === 'host_task_start')).toEqual([]);

    const real = await tsbm(['run', UNDEPLOY, '-i', lab.inventory, '-l', 'node01', '-t', 'nosuchtag']);
    expect(real.code, real.stderr).toBe(0);
    const asCheck = await tsbm(['run', UNDEPLOY, '-i', lab.inventory, '--resume', 'last', '--check']);
    expect(asCheck.code).toBe(5);
    expect(asCheck.stderr).toMatch(/--check \(the run was a real run/);
    expect(await power(0)).toBe('On');
  }, 120_000);
});
