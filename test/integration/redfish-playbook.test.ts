// The Redfish modules through the real executor (tsbm run's code path): two nodes, each with
// its own fake BMC, powered off, booted from a local ISO served by the built-in HTTP server,
// powered on, then set to boot from disk; re-running steady-state steps changes nothing; no
// secret in any event.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runPlaybook } from '../../src/executor/run.js';
import { EventBus, type TsbmEvent } from '../../src/output/events.js';
import { Redactor } from '../../src/output/redact.js';
import { type FakeBmc, startFakeBmc } from '../../packages/lab/src/bmc/server.js';
import type { BootInfo } from '../../packages/lab/src/bmc/state.js';
import { MOCKUPS } from './redfish-helpers.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();

const PASSWORD = 'Pl4ybook-bmc-pw';
const bmcs: FakeBmc[] = [];
afterEach(async () => {
  for (const b of bmcs.splice(0)) await b.close();
});

const PLAYBOOK = `- hosts: nodes
  gather_facts: false
  tasks:
    - name: Power off
      redfish_power: { state: "off", poll_interval: 0.05 }
    - name: Boot the ramdisk ISO once
      vmedia_boot: { image: ramdisk.iso }
    - name: Power on
      redfish_power: { state: "on", poll_interval: 0.05 }
      register: power
    - name: Boot from disk from now on
      redfish_boot_device: { device: disk, persistent: true }
    - name: Identity is registered
      assert:
        that: ["power.system_uuid", "eq power.power_state 'On'"]
`;

function options(dir: string, verbosity: 0 | 1 | 2 | 3, playbook: string) {
  return {
    playbook: path.join(dir, playbook),
    inventories: [path.join(dir, 'inventory.yml')],
    tags: [],
    skipTags: [],
    extraVars: {},
    forks: 5,
    check: false,
    diff: false,
    listHosts: false,
    listTasks: false,
    listTags: false,
    syntaxCheck: false,
    output: 'json' as const,
    verbosity,
  };
}

async function run(dir: string, verbosity: 0 | 1 | 2 | 3, playbook = 'site.yml'): Promise<{ code: number; events: TsbmEvent[] }> {
  const redactor = new Redactor();
  const bus = new EventBus(redactor);
  const events: TsbmEvent[] = [];
  bus.on((e) => events.push(e));
  const code = await runPlaybook(options(dir, verbosity, playbook), { bus, redactor });
  return { code, events };
}

describe('Redfish modules through the executor', () => {
  it('drives two nodes through power, virtual media and boot device; idempotent on re-run', async () => {
    const boots: Record<string, BootInfo[]> = { node1: [], node2: [] };
    const trees = { node1: 'hpe-ilo5-dl325-gen10plus', node2: 'dmtf-public-rackmount1' } as const;
    const dir = scratch('tsbm-rf-play-');
    writeFileSync(path.join(dir, 'ramdisk.iso'), Buffer.alloc(4096, 7));
    writeFileSync(path.join(dir, 'site.yml'), PLAYBOOK);
    const hosts: string[] = [];
    for (const [name, tree] of Object.entries(trees)) {
      const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/${tree}`, password: PASSWORD, powerDelayMs: 50, requireEtag: true, hooks: { onBoot: (b) => boots[name]?.push(b) } });
      bmcs.push(bmc);
      const ca = path.join(dir, `${name}-ca.pem`);
      writeFileSync(ca, bmc.caCertPem);
      hosts.push(`    ${name}:
      connection: local
      driver_info:
        redfish_address: ${bmc.url}
        redfish_username: admin
        redfish_password: ${PASSWORD}
        redfish_verify_ca: ${ca}`);
    }
    writeFileSync(path.join(dir, 'inventory.yml'), `nodes:\n  hosts:\n${hosts.join('\n')}\n`);

    const first = await run(dir, 3);
    const status = (evs: TsbmEvent[]) =>
      evs.filter((e): e is Extract<TsbmEvent, { type: 'host_result' }> => e.type === 'host_result').map((e) => `${e.host}:${e.task}:${e.status}`).sort();
    expect(first.code, JSON.stringify(first.events.filter((e) => e.type === 'host_result'), null, 1)).toBe(0);
    expect(status(first.events)).toEqual(
      [
        'node1:Power off:changed', 'node1:Boot the ramdisk ISO once:changed', 'node1:Power on:changed', 'node1:Boot from disk from now on:changed', 'node1:Identity is registered:ok',
        'node2:Power off:changed', 'node2:Boot the ramdisk ISO once:changed', 'node2:Power on:changed', 'node2:Boot from disk from now on:changed', 'node2:Identity is registered:ok',
      ].sort(),
    );
    for (const name of ['node1', 'node2']) {
      expect(boots[name]).toHaveLength(1);
      expect(boots[name]?.[0]).toMatchObject({ bootSourceOverrideTarget: 'Cd', mediaInserted: true });
      expect(boots[name]?.[0]?.image).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\/[0-9a-f]+\/ramdisk\.iso$/);
    }
    for (const b of bmcs) expect(b.openSessions()).toEqual([]); // logged out at the end of the run

    const all = JSON.stringify(first.events);
    expect(all).not.toContain(PASSWORD);
    expect(all).not.toContain(Buffer.from(`admin:${PASSWORD}`).toString('base64'));

    // Re-running the steps that have a steady state changes nothing.
    writeFileSync(
      path.join(dir, 'again.yml'),
      `- hosts: nodes
  gather_facts: false
  tasks:
    - name: Power on
      redfish_power: { state: "on" }
    - name: Boot from disk from now on
      redfish_boot_device: { device: disk, persistent: true }
`,
    );
    const second = await run(dir, 0, 'again.yml');
    expect(second.code).toBe(0);
    expect(status(second.events)).toEqual(
      ['node1:Power on:ok', 'node1:Boot from disk from now on:ok', 'node2:Power on:ok', 'node2:Boot from disk from now on:ok'].sort(),
    );
  }, 60_000);
});
