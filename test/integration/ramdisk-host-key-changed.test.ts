// A redeploy whose ramdisk came up with a new host key (ramdisks make one at every boot) while
// known_hosts still holds the key of an earlier boot: wait_agent fails at once, naming the
// refused key, the recorded one and how to remove it, instead of retrying the mismatch until
// agent_timeout and then saying "the ramdisk did not accept SSH". Nothing runs on the ramdisk.
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { generateKey, type SshHost, startSshHost } from '../helpers/ssh-host.js';
import { oneHostInventory, runYaml } from '../helpers/run-yaml.js';

const open: SshHost[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

describe('a ramdisk whose host key changed since it was recorded', () => {
  it('fails wait_agent at once with the fix, not after agent_timeout', async () => {
    const h = await startSshHost({ name: 'node1' });
    open.push(h);
    // What an earlier boot's ramdisk left in known_hosts: another key for the same address.
    const earlier = generateKey();
    writeFileSync(h.spec.knownHostsFile as string, `[127.0.0.1]:${h.spec.port} ${earlier.public}\n`);
    const r = await runYaml(
      oneHostInventory(h),
      `- hosts: node1
  gather_facts: false
  tasks:
    - name: Wait for the ramdisk
      wait_agent:
        timeout: 600
        interval: 2
        identity: "off"
`,
    );
    const res = r.result('node1', 'Wait for the ramdisk');
    expect(res?.status).toBe('failed');
    expect(res?.msg).toMatch(/the ramdisk's SSH host key was refused, so nothing was run on it: host key mismatch for node1 \(127\.0\.0\.1:\d+\): the server presented SHA256:\S+, but .*known_hosts:1 records SHA256:/);
    expect(JSON.stringify(res)).toMatch(/a ramdisk makes a new host key at every boot.*ssh-keygen -R/);
    expect(res?.msg).not.toMatch(/did not accept SSH/);
    // One attempt: retrying the mismatch for agent_timeout (600 s) would outlast this test's timeout.
    expect(h.commands).toEqual([]);
  }, 60_000);
});
