// The ramdisk half of a deploy through the real executor (tsbm run's code path): wait_agent,
// root_device, podman_pull and bootc_install against a simulated ramdisk over SSH, with
// templated arguments and registered results, and the pull secret in no event or command.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runPlaybook } from '../../src/executor/run.js';
import { EventBus, type TsbmEvent } from '../../src/output/events.js';
import { Redactor } from '../../src/output/redact.js';
import { onNode, ranSteps, type SimNode, startSimNode } from './deploy-sim-context.js';

const PASSWORD = 'Run-s3cret-pw';
const TOKEN = Buffer.from(`tester:${PASSWORD}`).toString('base64');

let node: SimNode | undefined;
afterEach(async () => {
  await node?.close();
  node = undefined;
});

function files(n: SimNode): { playbook: string; inventory: string } {
  const playbook = path.join(n.root, 'ramdisk.yml');
  writeFileSync(
    playbook,
    `- hosts: nodes
  gather_facts: false
  tasks:
    - name: Wait for the ramdisk
      wait_agent:
        timeout: 10
        interval: 1
        mac_addresses: ["52:54:00:12:34:56"]
    - name: Choose the root disk
      root_device: {}
      register: root
    - name: Pull
      podman_pull:
        auth_dir: /run/tsbm
        containers_conf_dir: /etc/containers/containers.conf.d
        meminfo_path: /proc/meminfo
        tls_verify: "{{ lab_tls_verify }}"
      register: pulled
    - name: Install
      bootc_install:
        device: "{{ root.device }}"
        size_mib: "{{ root.size_mib }}"
        extra_args: "{{ bootc_extra_args }}"
`,
  );
  const spec = n.host.spec;
  const inventory = path.join(n.root, 'inventory.yml');
  writeFileSync(
    inventory,
    `nodes:
  hosts:
    node1:
      connection: ssh
      ssh_host: 127.0.0.1
      ssh_port: ${spec.port}
      ssh_user: ${spec.user}
      ssh_private_key_file: ${spec.privateKeyFile}
      ssh_known_hosts_file: ${spec.knownHostsFile}
      lab_tls_verify: false
      bootc_extra_args: ["--karg=console=ttyS0"]
      instance_info:
        image_source: oci://10.88.0.1:5001/bootc/test:1
        image_pull_secret: ${TOKEN}
`,
  );
  return { playbook, inventory };
}

describe('ramdisk steps through the executor', () => {
  it('deploys to the simulated disk; the secret is in no event and no command', async () => {
    node = await startSimNode({
      registryAuth: `tester:${PASSWORD}`,
      imageBytes: 104857600,
      meminfo: 'MemAvailable: 8000000 kB\n',
      macs: ['52:54:00:12:34:56'],
    });
    const { playbook, inventory } = files(node);
    const redactor = new Redactor();
    const bus = new EventBus(redactor);
    const events: TsbmEvent[] = [];
    bus.on((e) => events.push(e));
    const connectionsBefore = node.host.server.connections;
    const code = await runPlaybook(
      {
        playbook,
        inventories: [inventory],
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
        output: 'json',
        verbosity: 3,
      },
      { bus, redactor },
    );
    const results = events.filter((e) => e.type === 'host_result');
    expect(
      results.map((e) => `${e.task}:${e.status}`),
      JSON.stringify(results, null, 1),
    ).toEqual(['Wait for the ramdisk:ok', 'Choose the root disk:ok', 'Pull:changed', 'Install:changed']);
    expect(code).toBe(0);
    // Small commands travel in batches: wait_agent 1 round trip, root_device 1, podman_pull 4
    // (directories with the skopeo check; facts with the first manifest probe, podman's here as
    // skopeo is missing; the fallback probe this stand-in needs; the pull with its cleanup),
    // bootc_install 2 (getenforce with the image inspect; the install with its cleanup). One by
    // one these were 21 commands.
    expect(node.host.commands).toHaveLength(8);
    expect(node.host.commands.join('\n')).not.toMatch(/skopeo inspect/);
    // wait_agent's checked connection carries the later tasks: one handshake for the whole run.
    expect(node.host.server.connections - connectionsBefore).toBe(1);
    const args = readFileSync(path.join(node.state, 'podman-run-args'), 'utf8').trim().split('\n');
    expect(args).toContain('--root-size=7424M');
    expect(args.slice(-2)).toEqual(['--karg=console=ttyS0', '/dev/vda']);
    // The pull runs in a batch with the auth file's removal (one round trip).
    const pullLine =
      'podman pull --authfile ' +
      onNode(node, readFileSync(path.join(node.state, 'last-authfile'), 'utf8').trim()) +
      ' --tls-verify=false 10.88.0.1:5001/bootc/test:1';
    expect(ranSteps(node.host.commands)).toContain(pullLine);
    expect(existsSync(path.join(node.state, 'violations'))).toBe(false);
    const all = JSON.stringify(events);
    expect(all).not.toContain(PASSWORD);
    expect(all).not.toContain(TOKEN);
    for (const c of node.host.commands) expect(c).not.toContain(TOKEN);
  }, 60_000);
});
