// Every node that does not finish ends safe, or is reported as it is (issue 36 point 3), on the
// simulated lab through the built CLI. node02's ramdisk drops SSH mid-deploy (unreachable, which
// no rescue handles): the run still powers it off and ejects its media through its BMC, read
// back, and its record says deploy failed, Off, media out. node03's BMC stops answering while
// node03 waits for a ramdisk that never boots: nothing can end it safe, so it is `unknown`
// (record, recap) and no message says it was powered off. node01 deploys.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import type { SimNode } from '../../packages/lab/src/lab/node.js';
import { type CliRun, DEPLOY, runTsbm, spawnTsbm, stateArgs } from '../helpers/fault-cli.js';

const WAIT = 'Wait for the ramdisk and check it is this node';

let dir: string;
let lab: Lab;
let r: CliRun;
const node = (name: string): SimNode => lab.nodes.find((n) => n.cfg.name === name)!;

interface Rec {
  name: string;
  provisionState: string;
  lastError?: string;
  power?: { state: string };
  media?: { inserted: boolean };
}
async function records(): Promise<Record<string, Rec>> {
  const s = stateArgs(dir);
  const l = await runTsbm(['nodes', 'list', '--output', 'json'], { cwd: dir, env: s.env });
  expect(l.code, l.stderr).toBe(0);
  return Object.fromEntries((JSON.parse(l.stdout) as Rec[]).map((x) => [x.name, x]));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-endsafe-'));
  lab = await startLab({ nodes: 3, dir: join(dir, 'lab'), bootDelayMs: 150, powerDelayMs: 30, faults: 'node02:ssh_drop=4;node03:never_boots' });
  const s = stateArgs(dir);
  const extra = JSON.stringify({ agent_timeout: 20 });
  const running = spawnTsbm(['run', DEPLOY, '-i', lab.inventory, '--output', 'json', '-e', extra, ...s.args], { cwd: dir, env: s.env, timeoutMs: 200_000 });
  // node03's BMC goes silent once node03 waits for its ramdisk (powered on, ISO inserted).
  let silenced = false;
  running.child.stdout!.on('data', (d: string) => {
    if (!silenced && d.includes('"host_task_start"') && /"host":"node03"[^\n]*"task":"Wait for the ramdisk/.test(d)) {
      silenced = true;
      void node('node03').bmc!.close();
    }
  });
  r = await running.done;
  expect(silenced, 'node03 never reached its ramdisk wait').toBe(true);
}, 240_000);

afterAll(async () => {
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('nodes that do not finish', () => {
  it('node01 deploys; the run reports the others failed or unreachable (exit 4: unreachable wins)', async () => {
    expect(r.code, r.stderr).toBe(4);
    const recap = r.events.find((e) => e.type === 'recap') as unknown as { hosts: Record<string, { outcome: string; node?: Record<string, unknown> }> };
    expect(recap.hosts.node01).toMatchObject({ outcome: 'ok', node: { state: 'active' } });
    expect(recap.hosts.node02?.outcome).toBe('unreachable');
    expect(recap.hosts.node03?.outcome).toBe('failed');
  });

  it('an unreachable ramdisk: the node ends Off with its media out, read back, and its record says so', async () => {
    const n = node('node02');
    expect(n.bmc!.state.powerState).toBe('Off');
    expect(n.bmc!.state.cdSlots().filter((s) => s.Inserted === true)).toEqual([]);
    const end = r.events.find((e) => e.type === 'host_result' && e.host === 'node02' && e.task?.startsWith('End the node safe'));
    expect(end?.status, JSON.stringify(end)).toMatch(/^(ok|changed)$/);
    const rec = (await records()).node02!;
    expect(rec).toMatchObject({ provisionState: 'deploy failed', power: { state: 'Off' }, media: { inserted: false } });
    const recap = r.events.find((e) => e.type === 'recap') as unknown as { hosts: Record<string, { node?: Record<string, unknown> }> };
    expect(recap.hosts.node02?.node).toMatchObject({ state: 'deploy failed', power: 'Off', media: 'ejected' });
  });

  it('a BMC that stops answering: the node is unknown, never reported powered off', async () => {
    expect(r.events.some((e) => e.type === 'host_result' && e.host === 'node03' && e.task === WAIT && e.status !== 'ok')).toBe(true);
    const rec = (await records()).node03!;
    expect(rec.provisionState).toBe('unknown');
    expect(rec.power?.state).toBe('unknown');
    expect(rec.lastError).toMatch(/could not end it safe/);
    const recap = r.events.find((e) => e.type === 'recap') as unknown as { hosts: Record<string, { node?: Record<string, unknown> }> };
    expect(recap.hosts.node03?.node).toMatchObject({ state: 'unknown', power: 'unknown' });
    // No line about node03 claims what could not be done.
    const said = r.events.filter((e) => e.host === 'node03' && typeof e.msg === 'string').map((e) => e.msg as string);
    expect(said.filter((m) => /powered off|media ejected/.test(m) && !/could not|not (be )?powered|failed/.test(m))).toEqual([]);
    // It really is still On with the ISO in: what the report must not hide.
    expect(node('node03').bmc!.state.powerState).toBe('On');
  });
});
