// A simulated lab from a vendor tree whose BMC manages several Systems (a blade enclosure, a
// multi-node chassis; here derived from the DMTF tree, whose virtual media sits under each
// System): the lab puts that many nodes behind one BMC address, each node one System with its
// own power, boot override, virtual CD, UUID and MACs, and its inventory names the System
// (`redfish_system_id`), so deploy-bootc.yml deploys every node, and only its own System.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multiSystemMockup } from '../helpers/multi-system-mockup.js';
import { type Lab, startLab } from '../../packages/lab/src/lab/lab.js';

const exec = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..', '..');
const TSBM = join(ROOT, 'bin', 'tsbm.js');

interface Inventory {
  all: { children: { sim: { hosts: Record<string, { driver_info: Record<string, unknown> }> } } };
}

async function tsbm(playbook: string, inventory: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return exec('node', [TSBM, 'run', join(ROOT, 'playbooks', playbook), '-i', inventory, '--output', 'plain'], {
    maxBuffer: 64 << 20,
    timeout: 240_000,
  }).then(
    (x) => ({ code: 0, stdout: x.stdout, stderr: x.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
}

describe('a simulated lab from a tree whose BMC manages several Systems', () => {
  let dir: string;
  let lab: Lab;
  let systems: string[];
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tsbm-multi-system-'));
    systems = multiSystemMockup('dmtf-public-rackmount1', join(dir, 'enclosure'), 3);
    // Four nodes from a three-System tree: three behind one BMC, the fourth behind a second.
    lab = await startLab({ nodes: 4, dir: join(dir, 'lab'), mockups: [join(dir, 'enclosure')], bootDelayMs: 200, powerDelayMs: 50 });
  }, 60_000);
  afterAll(async () => {
    await lab?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('puts the tree\'s Systems behind one BMC address and names each node\'s System in the inventory', () => {
    expect(systems).toEqual(['/redfish/v1/Systems/437XR1138R2', '/redfish/v1/Systems/437XR1138R2-2', '/redfish/v1/Systems/437XR1138R2-3']);
    const hosts = (parse(readFileSync(lab.inventory, 'utf8')) as Inventory).all.children.sim.hosts;
    const info = (n: string) => hosts[n]!.driver_info;
    expect(['node01', 'node02', 'node03', 'node04'].map((n) => info(n).redfish_system_id)).toEqual([...systems, systems[0]]);
    expect(new Set(['node01', 'node02', 'node03'].map((n) => info(n).redfish_address)).size).toBe(1);
    expect(info('node04').redfish_address).not.toBe(info('node01').redfish_address);
    expect(lab.nodes[0]!.bmc).toBe(lab.nodes[2]!.bmc);
    expect(lab.nodes.map((n) => n.uuid).length).toBe(new Set(lab.nodes.map((n) => n.uuid)).size);
  });

  it('without redfish_system_id every node fails as on a real enclosure, touching nothing', async () => {
    const doc = parse(readFileSync(lab.inventory, 'utf8')) as Inventory;
    for (const h of Object.values(doc.all.children.sim.hosts)) delete h.driver_info.redfish_system_id;
    const bare = join(dir, 'no-system-id.yml');
    writeFileSync(bare, stringify(doc));
    const r = await tsbm('deploy-bootc.yml', bare);
    expect(r.code).toBe(2);
    for (const n of ['node01', 'node02', 'node03', 'node04']) {
      expect(r.stdout).toMatch(
        new RegExp(`^failed: \\[${n}\\] .*manages several Systems: /redfish/v1/Systems/437XR1138R2, /redfish/v1/Systems/437XR1138R2-2, /redfish/v1/Systems/437XR1138R2-3\\W+set driver_info.redfish_system_id`, 'm'),
      );
    }
    const bmc = lab.nodes[0]!.bmc!;
    expect(bmc.state.resets).toEqual([]);
    for (const s of systems) expect(bmc.state.powerStateOf(s)).toBe('Off');
  }, 240_000);

  it('deploy-bootc.yml deploys all four nodes, each through its own System', async () => {
    const r = await tsbm('deploy-bootc.yml', lab.inventory);
    expect(r.code, r.stdout.slice(-4000) + r.stderr).toBe(0);
    for (const n of ['node01', 'node02', 'node03', 'node04']) {
      expect(r.stdout).toMatch(new RegExp(`^${n} : ok=\\d+ +changed=\\d+ +unreachable=0 +failed=0 `, 'm'));
      expect(r.stdout).toMatch(new RegExp(`^changed: \\[${n}\\] Write the config drive .*: config drive written to /dev/vda`, 'm'));
    }
    for (const n of lab.nodes) {
      const state = n.bmc!.state;
      // Its own System: powered on, booting from disk from now on, its CD ejected, its UUID.
      expect(state.powerStateOf(n.systemPath)).toBe('On');
      expect(state.bootOf(n.systemPath)).toMatchObject({ BootSourceOverrideTarget: 'Hdd', BootSourceOverrideEnabled: 'Continuous' });
      expect(state.cdSlots(n.systemPath).filter((s) => s.Image === 'http://127.0.0.1:9/tsbm-sim-ramdisk.iso')).toEqual([]);
      expect(state.systemAt(n.systemPath).UUID).toBe(n.uuid);
      // Booted into the installed system (the playbook does not wait for it here).
      await expect.poll(() => n.phase, { timeout: 10_000 }).toBe('instance');
      const layout = await n.diskLayout();
      expect(layout.partitions.map((p) => p.name)).toEqual(['EFI-SYSTEM', 'root', 'config-2']);
      expect((await n.status()).system).toBe(n.systemPath);
    }
    // The enclosure's BMC reset each of its three Systems (off, on, restart), nothing else.
    const shared = lab.nodes[0]!.bmc!.state;
    expect(shared.resets.length).toBe(lab.nodes[3]!.bmc!.state.resets.length * 3);
  }, 240_000);
});

describe('a multi-System tree whose Systems share one virtual CD', () => {
  it('is refused at lab start: its nodes would insert into each other\'s drive', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsbm-multi-system-shared-'));
    try {
      // HPE iLO keeps its virtual media under the Manager: copies of the System share it.
      multiSystemMockup('hpe-ilo5-dl325-gen10plus', join(dir, 'tree'), 2);
      await expect(startLab({ nodes: 2, dir: join(dir, 'lab'), mockups: [join(dir, 'tree')] })).rejects.toThrow(
        /Systems \/redfish\/v1\/Systems\/1 and \/redfish\/v1\/Systems\/1-2 share the virtual CD \/redfish\/v1\/Managers\/1\/VirtualMedia\/2/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
