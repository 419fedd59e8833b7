// Every remote command has a default timeout (tsbm_command_timeout) unless its module or the
// task's `timeout:` says otherwise: a hung ramdisk probe fails the host instead of stalling the
// run. The hung probe is a real one: wait_agent's product UUID read, pointed at a FIFO nobody
// writes (cat blocks forever), on an in-process SSH host.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SshHost, startSshHost } from '../helpers/ssh-host.js';
import { runYaml, sshVars } from '../helpers/run-yaml.js';

let h: SshHost;
let fifo = '';

beforeAll(async () => {
  h = await startSshHost({ name: 'node1' });
  fifo = path.join(h.dir, 'product_uuid');
  execFileSync('mkfifo', [fifo]);
});
afterAll(async () => {
  await h.close();
});

const inventory = (vars: string) => `all:
  hosts:
    node1:
${sshVars(h)}${vars}`;

describe('default command timeout', () => {
  it('a hung wait_agent probe is killed after tsbm_command_timeout and fails the host, saying so', async () => {
    const r = await runYaml(
      inventory('      tsbm_command_timeout: 2\n'),
      `- hosts: node1
  tasks:
    - name: wait
      wait_agent:
        timeout: 20
        identity: "off"
        product_uuid_path: ${fifo}
`,
    );
    const res = r.result('node1', 'wait');
    expect(res?.status).toBe('failed');
    expect(res?.msg).toMatch(/timed out after 2000 ms and was killed/);
    expect(r.code).toBe(2);
  }, 30_000);

  it('a hung command task is killed the same way; a task timeout: replaces the default', async () => {
    const r = await runYaml(
      inventory('      tsbm_command_timeout: 1\n'),
      `- hosts: node1
  tasks:
    - name: hung
      command:
        argv: [cat, ${fifo}]
      ignore_errors: true
    - name: slow but within its own timeout
      command: sleep 2
      timeout: 20
`,
    );
    expect(r.result('node1', 'hung')?.msg).toMatch(/timed out after 1000 ms and was killed: cat /);
    expect(r.result('node1', 'slow but within its own timeout')?.status).toBe('changed');
  }, 30_000);

  it('a value that is not seconds is an options error naming the variable', async () => {
    const r = await runYaml(inventory('      tsbm_command_timeout: soon\n'), `- hosts: node1\n  tasks:\n    - name: t\n      command: "true"\n`);
    expect(r.result('node1', 't')?.msg).toMatch(/tsbm_command_timeout "soon" is not a number of seconds/);
  });

  it('tsbm_max_output reaches module commands: a registered stdout is cut to head and tail', async () => {
    const r = await runYaml(
      inventory('      tsbm_max_output: 64KiB\n'),
      `- hosts: node1
  tasks:
    - name: loud
      shell: "echo START; head -c 1000000 /dev/zero | tr '\\\\0' x; echo; echo END"
      register: loud
`,
    );
    const out = (r.result('node1', 'loud')?.result as { stdout?: string } | undefined)?.stdout ?? '';
    expect(out.length).toBeLessThan(64 * 1024 + 200);
    expect(out).toMatch(/^START\n/);
    expect(out).toMatch(/END$/);
    expect(out).toMatch(/bytes of stdout dropped here; kept the first and last 32 KiB/);
  }, 30_000);
});
