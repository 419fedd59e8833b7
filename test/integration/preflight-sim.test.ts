// The deploy preflight on the simulated lab, through the built CLI: nodes with a misspelled
// image, a wrong BMC password, an ISO nobody serves and an image_source of the wrong kind fail
// before anything touches them (their fake BMCs record no power action, no media), while the
// healthy nodes deploy; preflight_on_failure: stop keeps every node untouched; deploy-image.yml
// refuses an oci:// source before power-off (issue 21's report).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';
import type { SimNode } from '../../packages/lab/src/lab/node.js';
import { type CliRun, DEPLOY, failuresOf, ROOT, runTsbm, stateArgs } from '../helpers/fault-cli.js';

const PREFLIGHT = 'Check the node before touching it (BMC, image, ISO)';
const DEPLOY_IMAGE = join(ROOT, 'playbooks', 'deploy-image.yml');
// node01 (and node06) are active once the first describe's deploy is done: every later run
// that targets node01 is a rebuild, and says so (a deploy without it is refused by its record).
const REBUILD = ['--rebuild'];

type InventoryDoc = {
  all: { vars: Record<string, unknown> & { instance_info: Record<string, unknown> }; children: { sim: { hosts: Record<string, Record<string, unknown>> } } };
};

let dir: string;
let lab: Lab;
let closedPort: number;

const node = (name: string): SimNode => lab.nodes.find((n) => n.cfg.name === name)!;
/** What a node's BMC was asked to do since `since` (power resets, inserted media). */
const touched = (n: SimNode, resetsBefore = 0) => ({
  resets: n.bmc!.state.resets.slice(resetsBefore),
  media: n.bmc!.state.cdSlots().filter((s) => s.Inserted === true).length,
});

function inventoryWith(name: string, edit: (doc: InventoryDoc) => void): string {
  const doc = parse(readFileSync(lab.inventory, 'utf8')) as InventoryDoc;
  edit(doc);
  const file = join(dir, `${name}.yml`);
  writeFileSync(file, stringify(doc));
  return file;
}

async function run(playbook: string, inventory: string, extra: string[] = []): Promise<CliRun> {
  const state = stateArgs(dir);
  return runTsbm(['run', playbook, '-i', inventory, '--output', 'json', ...state.args, ...extra], { cwd: dir, env: state.env, timeoutMs: 150_000 });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-preflight-'));
  // node05's BMC answers slowly: its preflight takes seconds where the others take a fraction.
  lab = await startLab({ nodes: 6, dir: join(dir, 'lab'), bootDelayMs: 150, powerDelayMs: 30, faults: 'node05:bmc_latency=700' });
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', () => ok()));
  closedPort = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
}, 60_000);

afterAll(async () => {
  await lab?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('deploy preflight on the simulated lab', () => {
  let r: CliRun;
  let tokensBefore: number;
  beforeAll(async () => {
    const inv = inventoryWith('mixed', (doc) => {
      const hosts = doc.all.children.sim.hosts;
      const info = doc.all.vars.instance_info;
      hosts.node02!.instance_info = { ...info, image_source: 'oci://registry.sim.tsbm:5000/tsbm/bootc-dmeo:latest' };
      hosts.node03!.driver_info = { ...(hosts.node03!.driver_info as Record<string, unknown>), redfish_password: 'not-the-bmc-password' };
      hosts.node04!.ramdisk_iso = `http://127.0.0.1:${closedPort}/ramdisk.iso`;
      hosts.node05!.instance_info = { ...info, image_source: 'https://images.example/os/disk.raw' };
    });
    tokensBefore = lab.registry.requests.filter((q) => q === 'GET /token').length;
    r = await run(DEPLOY, inv);
  }, 160_000);

  it('the broken nodes fail at the preflight with what is wrong and what to do; exit 2', () => {
    expect(r.code, r.stderr).toBe(2);
    const f = failuresOf(r);
    expect([...f.keys()].sort()).toEqual(['node02', 'node03', 'node04', 'node05']);
    for (const h of ['node02', 'node03', 'node04', 'node05']) expect(f.get(h)?.task, h).toBe(PREFLIGHT);
    expect(f.get('node02')?.msg).toMatch(/registry: image registry\.sim\.tsbm:5000\/tsbm\/bootc-dmeo:latest: registry registry\.sim\.tsbm:5000 has no repository tsbm\/bootc-dmeo .*\(check the repository path/);
    expect(f.get('node03')?.msg).toMatch(/bmc: .*credentials \(HTTP 401\).*check driver_info\.redfish_username and redfish_password/);
    expect(f.get('node04')?.msg).toMatch(new RegExp(`iso: ramdisk_iso http://127\\.0\\.0\\.1:${closedPort}/ramdisk\\.iso does not answer from the controller .*ECONNREFUSED`));
    expect(f.get('node05')?.msg).toMatch(/image: image_source https:\/\/images\.example\/os\/disk\.raw is a disk image URL; deploy-bootc\.yml installs container images \(run playbooks\/deploy-image\.yml/);
    for (const h of f.keys()) expect(f.get(h)?.msg, h).toMatch(/nothing was touched$/);
    expect(r.stdout).not.toContain('not-the-bmc-password');
  });

  it('no failed node was powered, given media or written to', async () => {
    for (const h of ['node02', 'node03', 'node04', 'node05']) {
      expect(touched(node(h)), h).toEqual({ resets: [], media: 0 });
      expect((await node(h).diskLayout()).partitions, h).toEqual([]);
      expect(node(h).phase, h).toBe('off');
    }
  });

  it('the healthy nodes passed the same preflight and deployed', async () => {
    for (const h of ['node01', 'node06']) {
      const ok = r.events.find((e) => e.type === 'host_result' && e.host === h && e.task === PREFLIGHT);
      expect(ok?.status, h).toBe('ok');
      expect(ok?.msg).toMatch(/^ready: BMC 127\.0\.0\.1:\d+: System \/redfish\/v1\/Systems\/1 \(Off\), virtual CD; image registry\.sim\.tsbm:5000\/tsbm\/bootc-demo:latest resolves \(sha256:[0-9a-f]{12}…\); ramdisk_iso answers \(65536 bytes\)$/);
      expect((await node(h).diskLayout()).partitions.map((p) => p.name), h).toEqual(['EFI-SYSTEM', 'root', 'config-2']);
    }
  });

  it('the preflight is one task: no skipped copy of it for preflight_on_failure: stop', () => {
    const started = r.events.flatMap((e) => (e.type === 'task_start' ? [e.task ?? ''] : []));
    expect(started.filter((t) => /^Check (the|every) node/.test(t))).toEqual([PREFLIGHT]);
    const skipped = r.events.filter((e) => e.type === 'host_result' && e.status === 'skipped' && e.task?.startsWith('Check'));
    expect(skipped).toEqual([]);
  });

  it('what nodes share is checked once per run: one token per image, one ISO probe', () => {
    const tokens = lab.registry.requests.filter((q) => q === 'GET /token').length - tokensBefore;
    expect(tokens).toBe(2); // bootc-demo (four nodes share it) and bootc-dmeo
    expect(lab.registry.requests.filter((q) => q.endsWith('/tsbm-sim-ramdisk.iso'))).toHaveLength(1);
  });
});

describe('preflight_on_failure: stop', () => {
  it('one node failing the preflight ends the play before any node is touched', async () => {
    const before = new Map(lab.nodes.map((n) => [n.cfg.name, n.bmc!.state.resets.length]));
    const inv = inventoryWith('stop', (doc) => {
      const hosts = doc.all.children.sim.hosts;
      hosts.node03!.instance_info = { ...doc.all.vars.instance_info, image_source: 'oci://registry.sim.tsbm:5000/tsbm/bootc-demo:no-such-tag' };
    });
    const r = await run(DEPLOY, inv, ['-e', 'preflight_on_failure=stop', '-l', 'node01,node03', ...REBUILD]);
    expect(r.code, r.stderr).toBe(2);
    expect(failuresOf(r).get('node03')?.msg).toMatch(/has no such tag or digest \(MANIFEST_UNKNOWN/);
    expect(failuresOf(r).has('node01')).toBe(false);
    for (const h of ['node01', 'node03']) expect(touched(node(h), before.get(h)).resets, h).toEqual([]);
    // node01 passed its own check but went no further
    const tasks = r.events.filter((e) => e.type === 'host_result' && e.host === 'node01').map((e) => e.task);
    expect(tasks).not.toContain('Power the node off');
  }, 120_000);

  it('each node at its own pace, yet a fast node that passed waits for a slow one that fails', async () => {
    const before = new Map(lab.nodes.map((n) => [n.cfg.name, n.bmc!.state.resets.length]));
    const inv = inventoryWith('stop-slow', (doc) => {
      const hosts = doc.all.children.sim.hosts;
      hosts.node05!.instance_info = { ...doc.all.vars.instance_info, image_source: 'oci://registry.sim.tsbm:5000/tsbm/bootc-demo:no-such-tag' };
    });
    const r = await run(DEPLOY, inv, ['-e', 'preflight_on_failure=stop', '-l', 'node01,node05', ...REBUILD]);
    expect(r.code, r.stderr).toBe(2);
    expect(failuresOf(r).get('node05')?.msg).toMatch(/has no such tag or digest/);
    const fast = r.events.filter((e) => e.type === 'host_result' && e.host === 'node01').map((e) => e.task);
    expect(fast).toContain(PREFLIGHT);
    expect(fast).not.toContain('Power the node off');
    for (const h of ['node01', 'node05']) expect(touched(node(h), before.get(h)).resets, h).toEqual([]);
    expect(touched(node('node01')).media).toBe(0);
  }, 120_000);

  it('any other value is refused before anything is checked', async () => {
    const r = await run(DEPLOY, lab.inventory, ['-e', 'preflight_on_failure=sometimes', '-l', 'node01', ...REBUILD]);
    expect(r.code).toBe(2);
    expect(failuresOf(r).get('node01')).toMatchObject({ task: 'Check the deploy knobs' });
  }, 60_000);
});

describe('deploy-image.yml with an oci:// source', () => {
  it('fails at the preflight, before power-off', async () => {
    const before = node('node01').bmc!.state.resets.length;
    const r = await run(DEPLOY_IMAGE, lab.inventory, ['-l', 'node01', ...REBUILD]);
    expect(r.code).toBe(2);
    expect(failuresOf(r).get('node01')).toMatchObject({ task: PREFLIGHT });
    expect(failuresOf(r).get('node01')?.msg).toMatch(/image: image_source is an OCI reference.*use playbooks\/deploy-bootc\.yml for oci:\/\/ images/);
    expect(touched(node('node01'), before).resets).toEqual([]);
  }, 60_000);
});

describe('preflight_on_failure: continue under strategy: free', () => {
  it("a slow node's preflight holds no other node up", async () => {
    const r = await run(DEPLOY, lab.inventory, ['-l', 'node01,node05', ...REBUILD]);
    expect(r.code, r.stderr).toBe(0);
    const at = (host: string, task: string) =>
      (r.events.find((e) => e.type === 'host_result' && e.host === host && e.task === task) as { time?: number } | undefined)?.time;
    const fastOff = at('node01', 'Power the node off');
    const slowChecked = at('node05', PREFLIGHT);
    expect(fastOff).toBeDefined();
    expect(slowChecked).toBeDefined();
    // node01 was powering and booting while node05's BMC was still being asked
    expect(fastOff!).toBeLessThan(slowChecked!);
  }, 150_000);
});
