// Cleanup after a failed deploy on the simulated lab, through the built CLI: nodes whose pull,
// bootc install or identity check fails after the ramdisk boot end powered off with their
// virtual media ejected, the failure says so and names the first failure, and they still count
// as failed (exit 2). on_deploy_failure: leave keeps a node as it fell.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import type { SimNode } from '../../packages/lab/src/lab/node.js';
import { type CliRun, DEPLOY, failuresOf, recapOf, runTsbm, stateArgs } from '../helpers/fault-cli.js';

const CLEANED = /^node powered off, virtual media ejected \(on_deploy_failure: power_off\) after "([^"]+)" failed: /;

let dir: string;
let lab: Lab;
let r: CliRun;

const node = (name: string): SimNode => lab.nodes.find((n) => n.cfg.name === name)!;
const state = (n: SimNode) => ({
  power: n.bmc!.state.powerState,
  media: n.bmc!.state.cdSlots().filter((s) => s.Inserted === true).length,
});
/** The first failed result of a host: where its deploy fell (the rescue handles it: status rescued). */
const firstFailure = (host: string) => r.events.find((e) => e.type === 'host_result' && e.host === host && e.status === 'rescued');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-cleanup-'));
  lab = await startLab({
    nodes: 5,
    dir: join(dir, 'lab'),
    bootDelayMs: 150,
    powerDelayMs: 30,
    faults: 'node02:pull_fail;node03:bootc_fail;node04:wrong_uuid;node05:bootc_fail',
  });
  const doc = parse(readFileSync(lab.inventory, 'utf8')) as { all: { children: { sim: { hosts: Record<string, Record<string, unknown>> } } } };
  doc.all.children.sim.hosts.node05!.on_deploy_failure = 'leave';
  const inv = join(dir, 'inventory.yml');
  writeFileSync(inv, stringify(doc));
  const s = stateArgs(dir);
  r = await runTsbm(['run', DEPLOY, '-i', inv, '--output', 'json', ...s.args], { cwd: dir, env: s.env, timeoutMs: 150_000 });
}, 180_000);

afterAll(async () => {
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('cleanup after a failed deploy', () => {
  it('the run exits 2; each failed node counts as failed (and rescued), the healthy one deploys', async () => {
    expect(r.code, r.stderr).toBe(2);
    const recap = recapOf(r)!;
    for (const h of ['node02', 'node03', 'node04', 'node05']) expect(recap[h], h).toMatchObject({ failed: 1, rescued: 1 });
    expect(recap.node01).toMatchObject({ failed: 0, rescued: 0 });
    expect((await node('node01').diskLayout()).partitions.map((p) => p.name)).toEqual(['EFI-SYSTEM', 'root', 'config-2']);
    expect(state(node('node01'))).toEqual({ power: 'On', media: 0 });
  });

  for (const [host, task, cause] of [
    ['node02', 'Pull the image', /simulated pull failure/],
    ['node03', 'Install the image to the root disk', /simulated failure/],
    ['node04', 'Wait for the ramdisk and check it is this node', /wrong machine: BMC system UUID/],
  ] as const) {
    it(`${host}: "${task}" failed; the node is powered off, its media ejected, and the message says so`, () => {
      expect(firstFailure(host)?.task).toBe(task);
      const f = failuresOf(r).get(host)!;
      expect(f.task).toBe('Report the failure');
      const m = CLEANED.exec(f.msg ?? '');
      expect(m, f.msg).not.toBeNull();
      expect(m?.[1]).toBe(task);
      // the host is named once (by the line), not again inside the message
      expect(f.msg).not.toContain(`${host}:`);
      expect(f.msg).toMatch(cause);
      expect(state(node(host))).toEqual({ power: 'Off', media: 0 });
      expect(node(host).phase).toBe('off');
    });
  }

  it('on_deploy_failure: leave keeps the node as it fell, and says so', () => {
    const f = failuresOf(r).get('node05')!;
    expect(f.msg).toMatch(/node left as it was \(on_deploy_failure: leave\) after "Install the image to the root disk" failed: .*simulated failure/s);
    expect(state(node('node05'))).toEqual({ power: 'On', media: 1 });
    expect(node('node05').phase).toBe('ramdisk');
    const skipped = r.events.filter((e) => e.type === 'host_result' && e.host === 'node05' && /after the failure/.test(e.task ?? ''));
    // Power off, eject, and eject the kickstart volume (deploy-anaconda.yml's): all skipped.
    expect(skipped.map((e) => `${e.task}: ${e.status}`)).toEqual([
      'Power the node off after the failure: skipped',
      'Eject the virtual media after the failure: skipped',
      'Eject the kickstart volume after the failure: skipped',
    ]);
  });
});
