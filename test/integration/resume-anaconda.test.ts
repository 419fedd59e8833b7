// --resume of deploy-anaconda.yml after a SIGTERM (a cancelled CI job) that stopped the run while
// one node's installer was still installing and the other's had finished. The installer the
// stopped run booted calls back with that run's token to that run's HTTP server, both gone: the
// resume must boot it again (power off, a fresh kickstart with a new token, the ISO inserted
// anew, power on) and wait for the new one, while the node that had got past the wait goes on
// with its finish steps and boots no installer again. Without it, the resumed run would wait
// for callbacks that never come until anaconda_timeout.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../src/sim/lab/lab.js';
import { type CliEvent, type CliRun, ROOT, runTsbm, spawnTsbm, stateArgs } from '../helpers/fault-cli.js';

const PLAYBOOK = resolve(ROOT, 'playbooks/deploy-anaconda.yml');
const WAIT = 'Wait for the installer';
const OFF_AGAIN = 'Power the node off before the installer boots';
const ATTACH = 'Attach the kickstart';
const CHOOSE = "Choose the installer's boot ISO";
const INSERT = 'Insert the installer ISO and boot once from it';
const POWER_ON = 'Power the node on';
const CYCLE = 'Power cycle into the installed system';
const BOOT_STEPS = [OFF_AGAIN, ATTACH, CHOOSE, INSERT, POWER_ON, WAIT];
// Long enough for a normal install under load; a resume that waits for the dead run's
// installer fails here instead of after the default hour.
const TIMEOUT_S = 120;

let dir: string;
let lab: Lab;
let stopped: CliRun;
let resumed: CliRun;
let tokenBefore: string | undefined;
let node02Record: string;
let node02Resets: string[];
let node01Media: { path: string; image: string }[];
let node01Phase: string;

const args = () => ['run', PLAYBOOK, '-i', lab.inventory, '--output', 'json', '-e', `anaconda_timeout=${TIMEOUT_S}`, ...stateArgs(dir).args];
const status = (r: CliRun, host: string, task: string) =>
  r.events.filter((e) => e.type === 'host_result' && e.host === host && e.task === task).map((e) => e.status);
const simFile = (i: number, file: string) => join(lab.nodes[i]!.root, file);
const tokenOf = (i: number) => /X-Tsbm-Token: ([A-Za-z0-9_-]+)/.exec(readFileSync(simFile(i, 'tmp/ks-script-pre-0.sh'), 'utf8'))?.[1];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-resume-anaconda-'));
  // node01's installer, once started, takes ten minutes (a slow mirror): the run is stopped
  // while it installs.
  lab = await startLab({ nodes: 2, dir: join(dir, 'lab'), bootDelayMs: 150, powerDelayMs: 30, diskGiB: 8, faults: 'node01:installer_delay=600000' });
  const state = stateArgs(dir);
  const running = spawnTsbm(args(), { cwd: dir, env: state.env });
  // SIGTERM as soon as node02's installer has called back end (its finish steps then under way)
  // and node01's is installing (its start callback made, the delay begun).
  const log = simFile(0, 'tmp/anaconda.log');
  const installing = () => existsSync(log) && readFileSync(log, 'utf8').includes('simulated fault installer_delay');
  let node02Done = false;
  let sent = false;
  const stop = () => {
    if (!sent && node02Done && installing()) {
      sent = true;
      tokenBefore = tokenOf(0);
      running.child.kill('SIGTERM');
    }
  };
  let buf = '';
  running.child.stdout!.on('data', (d: string) => {
    buf += d;
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const l of lines) {
      const e = JSON.parse(l) as CliEvent;
      if (e.type === 'host_result' && e.host === 'node02' && e.task === WAIT) node02Done = true;
    }
    stop();
  });
  // In case node01's installer starts its delay after node02's wait ended (a loaded machine).
  const poll = setInterval(stop, 100);
  stopped = await running.done;
  clearInterval(poll);
  node02Record = readFileSync(simFile(1, 'sim/installed.json'), 'utf8');
  node02Resets = [...lab.nodes[1]!.bmc!.state.resets];
  node01Media = lab.nodes[0]!.bmc!.state.insertedMedia().map(({ path, image }) => ({ path, image }));
  node01Phase = lab.nodes[0]!.phase;
  // The mirror answers quickly again: the installer the resume boots takes its normal time.
  delete lab.nodes[0]!.cfg.faults.installerDelayMs;
  resumed = await runTsbm([...args(), '--resume', 'last'], { cwd: dir, env: state.env, timeoutMs: (TIMEOUT_S + 120) * 1000 });
}, (TIMEOUT_S + 300) * 1000);

afterAll(async () => {
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('deploy-anaconda.yml: SIGTERM while an installer runs, then --resume last', () => {
  it('the stop found node01 installing and node02 past its wait', () => {
    expect(stopped.code, stopped.stderr).toBe(99);
    expect(status(stopped, 'node02', WAIT)).toEqual(['changed']);
    expect(status(stopped, 'node01', WAIT)).not.toContain('changed');
    expect(tokenBefore).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    // node01 still holds the stopped run's media: its installer ISO and its kickstart volume,
    // both served by the stopped run's HTTP server.
    expect(node01Media).toHaveLength(2);
    expect(node01Phase).toBe('installer');
  });

  it('the resume finishes both nodes', async () => {
    expect(resumed.code, `${resumed.stderr}\n${resumed.stdout.slice(-3000)}`).toBe(0);
    for (const [i, n] of lab.nodes.entries()) {
      expect(JSON.parse(readFileSync(simFile(i, 'sim/installed.json'), 'utf8')), n.cfg.name).toMatchObject({ result: 'installed', end: 'poweroff' });
      expect((await n.diskLayout()).partitions.map((p) => p.name), n.cfg.name).toEqual(['EFI System Partition', 'boot', 'root']);
      expect(n.bmc!.state.boot, n.cfg.name).toMatchObject({ BootSourceOverrideTarget: 'Hdd', BootSourceOverrideEnabled: 'Continuous' });
      // Both media out: neither the stopped run's nor the resume's left in a slot.
      expect(n.bmc!.state.insertedMedia().filter((m) => /tsbm-sim-installer|\/files\//.test(m.image)), n.cfg.name).toEqual([]);
    }
    const runs = readdirSync(join(dir, 'runs')).filter((f) => f.endsWith('.jsonl'));
    expect(runs).toHaveLength(2);
    expect(existsSync(join(dir, 'locks')) ? readdirSync(join(dir, 'locks')) : []).toEqual([]);
  });

  it("node01's install restarted from the boot, with a new kickstart and token, and the new installer called back", () => {
    // Powered off (its old installer was running), a fresh kickstart, the ISO, powered on.
    expect(status(resumed, 'node01', OFF_AGAIN)).toEqual(['changed']);
    expect(status(resumed, 'node01', ATTACH)).toEqual(['changed']);
    expect(status(resumed, 'node01', CHOOSE)).toEqual(['ok']);
    expect(status(resumed, 'node01', INSERT)).toEqual([expect.stringMatching(/^(ok|changed)$/)]);
    expect(status(resumed, 'node01', POWER_ON)).toEqual(['changed']);
    const wait = resumed.events.find((e) => e.type === 'host_result' && e.host === 'node01' && e.task === WAIT);
    expect(wait?.status).toBe('changed');
    expect(wait?.msg).toMatch(/^installed in \d+s \(started after \d+s\) on \/dev\/vda; the installer powered the node off$/);
    // The installer the resume booted ran a kickstart with a token of its own.
    const tokenAfter = tokenOf(0);
    expect(tokenAfter).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    expect(tokenAfter).not.toBe(tokenBefore);
    // ... read from a new volume: the stopped run's was ejected and replaced in its slot.
    const from = String(JSON.parse(readFileSync(simFile(0, 'sim/installed.json'), 'utf8')).from);
    expect(from).toMatch(/^OEMDRV volume http:\/\/127\.0\.0\.1:\d+\/files\//);
    expect(node01Media.map((m) => m.image)).not.toContain(from.slice('OEMDRV volume '.length));
    expect(resumed.stdout).not.toContain(tokenAfter);
    expect(resumed.stdout).not.toContain(tokenBefore);
  });

  it('node02, past its wait when stopped, reruns none of the boot steps, boots no installer again, and finishes', () => {
    for (const task of BOOT_STEPS) expect(status(resumed, 'node02', task), task).toEqual(['skipped']);
    // What it finished before the stop is not done again; the rest of its finish steps are.
    const before = stopped.events.filter((e) => e.type === 'host_result' && e.host === 'node02' && e.status !== 'failed').map((e) => e.task!);
    for (const task of before) expect(status(resumed, 'node02', task), task).toEqual(['skipped']);
    const cycled = before.includes(CYCLE);
    if (!cycled) expect(status(resumed, 'node02', CYCLE)).toEqual(['changed']);
    // Its install record is the stopped run's: no installer ran on it since.
    expect(readFileSync(simFile(1, 'sim/installed.json'), 'utf8')).toBe(node02Record);
    // One power operation at most since the stop: the cycle into the installed system, if it
    // was still to do (no power-off and power-on into an installer).
    expect(lab.nodes[1]!.bmc!.state.resets.slice(node02Resets.length)).toHaveLength(cycled ? 0 : 1);
  });
});
