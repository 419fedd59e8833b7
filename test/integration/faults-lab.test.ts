// The fault list of issue 6 against the simulated lab, through the built CLI: one deploy where
// each faulty node fails at the right task with the right message (or rides out a transient
// fault), while the healthy nodes deploy. Rows go to the fault table (npm run faults).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import { type CliRun, DEPLOY, failuresOf, firstFailuresOf, recapOf, runTsbm, stateArgs } from '../helpers/fault-cli.js';
import { flushFaultRows, tryFault } from '../helpers/fault-table.js';

const SOURCE = 'faults-lab';
const DEPLOYED = ['EFI-SYSTEM', 'root', 'config-2'];
const PREFLIGHT = 'Check the node before touching it (BMC, image, ISO)';

// node01 and node08 are healthy; every other node carries one fault.
const FAULTS = [
  'node02:bmc_503=1',
  'node03:bmc_reset=1',
  'node05:bootc_fail',
  'node06:ssh_drop=4',
  'node07:bmc_503=0.15',
  'node09:pull_fail',
].join(';');

/** node04 gets a wrong pull secret through a host var override: the registry answers 401. */
function wrongPullSecret(inventory: string, host: string): void {
  const doc = parse(readFileSync(inventory, 'utf8')) as {
    all: { vars: { instance_info: Record<string, unknown> }; children: { sim: { hosts: Record<string, Record<string, unknown>> } } };
  };
  const info = { ...doc.all.vars.instance_info, image_pull_secret: Buffer.from('tsbm:not-the-password').toString('base64') };
  doc.all.children.sim.hosts[host]!.instance_info = info;
  writeFileSync(inventory, stringify(doc));
}

describe('fault survival on the simulated lab', () => {
  let dir: string;
  let lab: Lab;
  let run: CliRun;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-faultlab-'));
    lab = await startLab({ nodes: 9, dir, bootDelayMs: 150, powerDelayMs: 30, faults: FAULTS });
    wrongPullSecret(lab.inventory, 'node04');
    const state = stateArgs(dir);
    run = await runTsbm(['run', DEPLOY, '-i', lab.inventory, '--output', 'json', ...state.args], { cwd: dir, env: state.env, timeoutMs: 200_000 });
  }, 220_000);
  afterAll(async () => {
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
    flushFaultRows(SOURCE);
  });

  const failure = (host: string) => failuresOf(run).get(host);
  /** The task a host fell at (a failure after the ramdisk boot is reported again by the cleanup). */
  const fellAt = (host: string) => firstFailuresOf(run).get(host)?.task;
  const resets = (host: string) => lab.nodes.find((n) => n.cfg.name === host)!.bmc!.state.resets;
  const layout = async (host: string) => (await lab.nodes.find((n) => n.cfg.name === host)!.diskLayout()).partitions.map((p) => p.name);

  it('the run ends (no hang), without a stack trace, and reports failures by exit code', () => {
    expect(run.signal, 'the runner was killed by the test guard: it hung').toBeNull();
    expect(run.code).not.toBe(0);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(Object.keys(recapOf(run) ?? {}).length).toBe(9);
  });

  it('healthy nodes deploy next to the faulty ones', async () => {
    await tryFault(SOURCE, { fault: 'healthy nodes beside faulty ones', how: '2 clean nodes in a 9-node deploy', cases: 2, outcome: 'both deployed (GPT + config-2), no failure' }, async () => {
      for (const h of ['node01', 'node08']) {
        expect(failure(h), h).toBeUndefined();
        expect(await layout(h), h).toEqual(DEPLOYED);
      }
    });
  });

  it('BMC 503 storm: bounded retries, then the preflight fails that host', async () => {
    await tryFault(SOURCE, { fault: 'BMC 503 storm', how: 'sim bmc_503=1 (every request 503)', cases: 1, outcome: 'retries exhausted, host failed at the preflight naming 503; no power action; disk untouched' }, async () => {
      const f = failure('node02');
      expect(f?.task).toBe(PREFLIGHT);
      expect(resets('node02')).toEqual([]);
      expect(f?.msg).toMatch(/503|unavailable/i);
      const retries = run.events.filter((e) => e.type === 'retry' && e.host === 'node02');
      expect(retries.length, 'it retried').toBeGreaterThan(0);
      expect(retries.length, 'bounded').toBeLessThan(50);
      expect(await layout('node02')).toEqual([]);
    });
  });

  it('BMC 503s now and then: retried, the node still deploys', async () => {
    await tryFault(SOURCE, { fault: 'BMC intermittent 503', how: 'sim bmc_503=0.15', cases: 1, outcome: 'retried transparently, node deployed' }, async () => {
      expect(failure('node07')).toBeUndefined();
      expect(await layout('node07')).toEqual(DEPLOYED);
    });
  });

  it('BMC resets every connection: bounded retries, then the preflight fails that host', async () => {
    await tryFault(SOURCE, { fault: 'BMC connection resets', how: 'sim bmc_reset=1 (socket destroyed on every request)', cases: 1, outcome: 'host failed at the preflight with a connection error; no power action; disk untouched' }, async () => {
      const f = failure('node03');
      expect(f?.task).toBe(PREFLIGHT);
      expect(resets('node03')).toEqual([]);
      expect(f?.msg).toMatch(/reset|socket|connection|ECONN|hang up/i);
      expect(await layout('node03')).toEqual([]);
    });
  });

  it('registry 401 (wrong pull secret for one host): the preflight fails it before power-off', async () => {
    await tryFault(SOURCE, { fault: 'registry 401', how: 'host var instance_info.image_pull_secret wrong for one host', cases: 1, outcome: 'host failed at the preflight naming the rejected pull secret; no power action; secret not in output; disk untouched' }, async () => {
      const f = failure('node04');
      expect(f?.task).toBe(PREFLIGHT);
      expect(f?.msg).toMatch(/refused the pull secret/);
      expect(resets('node04')).toEqual([]);
      expect(f?.msg).toMatch(/401|unauthori[sz]ed|authentication/i);
      expect(run.stdout).not.toContain('not-the-password');
      expect(await layout('node04')).toEqual([]);
    });
  });

  it('registry down: the pull fails on that host only', async () => {
    await tryFault(SOURCE, { fault: 'registry down', how: 'sim pull_fail', cases: 1, outcome: 'host failed at "Pull the image" with the pull error, then powered off with media ejected; disk untouched' }, async () => {
      const f = failure('node09');
      expect(fellAt('node09')).toBe('Pull the image');
      expect(f?.msg).toMatch(/simulated pull failure/);
      expect(f?.msg).toMatch(/^node powered off, virtual media ejected/);
      expect(await layout('node09')).toEqual([]);
    });
  });

  it('bootc failing: the install task fails on that host', async () => {
    await tryFault(SOURCE, { fault: 'bootc install fails', how: 'sim bootc_fail', cases: 1, outcome: 'host failed at "Install the image to the root disk" with bootc\'s message, then powered off with media ejected' }, async () => {
      const f = failure('node05');
      expect(fellAt('node05')).toBe('Install the image to the root disk');
      expect(f?.msg).toMatch(/node powered off, virtual media ejected/);
      expect(f?.msg).toMatch(/simulated failure/);
    });
  });

  it('SSH dropped mid-command: that host fails or is unreachable, never hangs', async () => {
    await tryFault(SOURCE, { fault: 'SSH connection dropped mid-command', how: 'sim ssh_drop=4 (every command from the 4th cuts the connection)', cases: 1, outcome: 'host failed/unreachable with a connection-lost message; run ended' }, async () => {
      const f = failure('node06');
      expect(f).toBeDefined();
      expect(f?.status).toMatch(/failed|unreachable/);
      expect(f?.msg, f?.msg).toMatch(/connection|closed|lost|reset|unreachable/i);
    });
  });
});
