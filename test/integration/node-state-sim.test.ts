// Node records and the protection they give (issue 36 points 1 and 2), on the simulated lab
// through the built CLI: a deploy leaves its nodes active (image, playbook, run, since when);
// a rerun refuses them before touching anything, naming the node, its image and since when, and
// --rebuild deploys again; a protected node (tsbm nodes protect, or protected: true) is refused
// by every playbook that changes nodes, --rebuild or not; undeploy makes a node available again.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import type { SimNode } from '../../packages/lab/src/lab/node.js';
import { type CliRun, DEPLOY, ROOT, runTsbm, stateArgs } from '../helpers/fault-cli.js';

const PLAYBOOKS = (name: string) => join(ROOT, 'playbooks', `${name}.yml`);
const CHECK = "Check the node's record (provision state, protected)";

let dir: string;
let lab: Lab;
const node = (name: string): SimNode => lab.nodes.find((n) => n.cfg.name === name)!;
const bootcRuns = (name: string) => Number(readFileSync(join(node(name).root, 'sim/bootc-count'), 'utf8').trim());

async function tsbm(args: string[]): Promise<CliRun> {
  const s = stateArgs(dir);
  return runTsbm(args, { cwd: dir, env: s.env, timeoutMs: 150_000 });
}
const run = (playbook: string, extra: string[] = []) => tsbm(['run', playbook, '-i', lab.inventory, '--output', 'json', ...stateArgs(dir).args, ...extra]);

interface Rec {
  name: string;
  provisionState: string;
  image?: string;
  playbook?: string;
  runId?: string;
  activeSince?: number;
  protected: boolean;
  protectedReason?: string;
}
async function records(): Promise<Record<string, Rec>> {
  const r = await tsbm(['nodes', 'list', '--output', 'json']);
  expect(r.code, r.stderr).toBe(0);
  return Object.fromEntries((JSON.parse(r.stdout) as Rec[]).map((x) => [x.name, x]));
}
const refusalsOf = (r: CliRun) =>
  Object.fromEntries(r.events.filter((e) => e.type === 'host_result' && e.task === CHECK).map((e) => [e.host, { status: e.status, msg: e.msg }]));
const touched = (r: CliRun, host: string) => r.events.filter((e) => e.type === 'host_task_start' && e.host === host).map((e) => e.task);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-nodestate-'));
  lab = await startLab({ nodes: 3, dir: join(dir, 'lab'), bootDelayMs: 150, powerDelayMs: 30 });
}, 60_000);

afterAll(async () => {
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('node records through runs', () => {
  let firstRun = '';
  it('a deploy leaves its nodes active, with the image, the playbook, the run and since when', async () => {
    const t0 = Date.now();
    const r = await run(DEPLOY);
    expect(r.code, r.stderr).toBe(0);
    firstRun = String(r.events.find((e) => e.type === 'run_start')?.runId);
    const recs = await records();
    for (const name of ['node01', 'node02', 'node03']) {
      expect(recs[name]).toMatchObject({ provisionState: 'active', playbook: DEPLOY, runId: firstRun, protected: false });
      expect(recs[name]!.image).toMatch(/^oci:\/\//);
      expect(recs[name]!.activeSince).toBeGreaterThanOrEqual(t0);
    }
    const recap = r.events.find((e) => e.type === 'recap') as unknown as { hosts: Record<string, { outcome: string; node?: { state: string } }> };
    expect(recap.hosts.node01).toMatchObject({ outcome: 'ok', node: { state: 'active' } });
  }, 150_000);

  it('a rerun refuses the active nodes before touching them, naming image and since when; --rebuild deploys again', async () => {
    const before = bootcRuns('node01');
    const resets = node('node01').bmc!.state.resets.length;
    const r = await run(DEPLOY);
    expect(r.code).toBe(2);
    const refused = refusalsOf(r);
    expect(Object.keys(refused).sort()).toEqual(['node01', 'node02', 'node03']);
    expect(refused.node01!.msg).toMatch(/^node01 is active: it runs oci:\/\/\S+ since \d{4}-\d\d-\d\d \d\d:\d\d UTC \(run \S+, deploy-bootc\.yml\); deploy-bootc\.yml would reinstall it, so it is refused: pass --rebuild/);
    // Nothing was asked of the node: no task started, no power request.
    expect(touched(r, 'node01')).toEqual([]);
    expect(node('node01').bmc!.state.resets.length).toBe(resets);
    expect((await records()).node01).toMatchObject({ provisionState: 'active', runId: firstRun });

    const again = await run(DEPLOY, ['--rebuild', '-l', 'node01']);
    expect(again.code, again.stderr).toBe(0);
    expect(bootcRuns('node01')).toBe(before + 1);
    const rec = (await records()).node01!;
    expect(rec.provisionState).toBe('active');
    expect(rec.runId).toBe(String(again.events.find((e) => e.type === 'run_start')?.runId));
  }, 150_000);

  it('a protected node is refused by every playbook that changes nodes, --rebuild or not', async () => {
    const p = await tsbm(['nodes', 'protect', 'node02', '--reason', 'customer database']);
    expect(p.code, p.stderr).toBe(0);
    for (const [playbook, extra] of [
      [DEPLOY, ['--rebuild']],
      [PLAYBOOKS('deploy-image'), []],
      [PLAYBOOKS('deploy-ramdisk'), ['-e', 'instance_iso=https://isos.invalid/instance.iso']],
      [PLAYBOOKS('deploy-anaconda'), []],
      [PLAYBOOKS('undeploy'), []],
    ] as const) {
      const r = await run(playbook, ['-l', 'node02', ...extra]);
      expect(r.code, `${playbook}: ${r.stderr}`).toBe(2);
      expect(refusalsOf(r).node02?.msg, playbook).toMatch(/^node02 is protected \(customer database\); tsbm nodes unprotect node02 allows it again: .* so it is refused, --rebuild or not$/);
      expect(touched(r, 'node02'), playbook).toEqual([]);
    }
    // A host variable protects too (as Ironic's node field).
    const r = await run(PLAYBOOKS('undeploy'), ['-l', 'node03', '-e', 'protected=true']);
    expect(r.code).toBe(2);
    expect(refusalsOf(r).node03?.msg).toMatch(/^node03 is protected \(protected: true in its variables\)/);
    expect((await records()).node02).toMatchObject({ provisionState: 'active', protected: true, protectedReason: 'customer database' });
  }, 150_000);

  it('undeploy makes a node available again; then a deploy is no rebuild', async () => {
    const u = await run(PLAYBOOKS('undeploy'), ['-l', 'node03']);
    expect(u.code, u.stderr).toBe(0);
    expect((await records()).node03).toMatchObject({ provisionState: 'available', playbook: PLAYBOOKS('undeploy') });
    const d = await run(DEPLOY, ['-l', 'node03']);
    expect(d.code, d.stderr).toBe(0);
    expect((await records()).node03?.provisionState).toBe('active');
  }, 150_000);
});
