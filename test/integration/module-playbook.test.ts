// The generic modules through the whole stack: loader, schema validation, executor, pooled
// SSH connections to two in-process hosts. A second run must report no changes (idempotence).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPlaybook } from '../../src/executor/run.js';
import { EventBus, type TsbmEvent } from '../../src/output/events.js';
import { Redactor } from '../../src/output/redact.js';
import { baseOptions } from '../helpers/executor-model.js';
import { shellExecHandler } from '../../packages/lab/src/ssh/exec.js';
import { type SshHost, startSshHost } from '../helpers/ssh-host.js';

let hosts: SshHost[] = [];
let dir = '';

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tsbm-modpb-'));
  hosts = [await startSshHost({ name: 'm1' }), await startSshHost({ name: 'm2' })];
  const vars = (h: SshHost) => `      ssh_host: 127.0.0.1
      ssh_port: ${h.spec.port}
      ssh_user: ${h.spec.user}
      ssh_private_key_file: ${h.spec.privateKeyFile}
      ssh_known_hosts_file: ${h.spec.knownHostsFile}
      out_dir: ${path.join(dir, h.spec.host)}
`;
  writeFileSync(path.join(dir, 'inventory.yml'), `nodes:\n  hosts:\n    m1:\n${vars(hosts[0]!)}    m2:\n${vars(hosts[1]!)}`);
  mkdirSync(path.join(dir, 'templates'));
  writeFileSync(path.join(dir, 'templates', 'info.hbs'), 'host={{ inventory_hostname }} cpus={{ facts.processor_count }}\n');
  mkdirSync(path.join(dir, 'files'));
  writeFileSync(path.join(dir, 'files', 'static.txt'), 'static\n');
  writeFileSync(
    path.join(dir, 'site.yml'),
    `- hosts: nodes
  gather_facts: true
  tasks:
    - name: work dir
      file:
        path: "{{ out_dir }}"
        state: directory
        mode: '0750'
    - name: static file
      copy:
        src: static.txt
        dest: "{{ out_dir }}/static.txt"
        mode: '0600'
    - name: inline file
      copy:
        content: "hello {{ inventory_hostname }}\\n"
        dest: "{{ out_dir }}/hello.txt"
    - name: rendered
      template:
        src: info.hbs
        dest: "{{ out_dir }}/info.txt"
    - name: once
      command: touch {{ out_dir }}/marker
      args:
        creates: "{{ out_dir }}/marker"
    - name: look
      stat:
        path: "{{ out_dir }}/hello.txt"
      register: st
    - name: read back
      slurp:
        src: "{{ out_dir }}/hello.txt"
      register: sl
    - name: ready
      wait_for:
        path: "{{ out_dir }}/marker"
        timeout: 5
    - name: check
      assert:
        that:
          - "{{ st.stat.exists }}"
          - "{{ eq sl.encoding 'base64' }}"
`,
  );
});

afterAll(async () => {
  for (const h of hosts) await h.close();
  rmSync(dir, { recursive: true, force: true });
});

async function run(extra: Parameters<typeof baseOptions>[0] = {}) {
  const bus = new EventBus();
  const events: TsbmEvent[] = [];
  bus.on((e) => events.push(e));
  const code = await runPlaybook(
    baseOptions({ playbook: path.join(dir, 'site.yml'), inventories: [path.join(dir, 'inventory.yml')], ...extra }),
    { bus, redactor: new Redactor() },
  );
  const results = events.filter((e): e is Extract<TsbmEvent, { type: 'host_result' }> => e.type === 'host_result');
  return { code, events, results };
}

describe('generic modules in a playbook', () => {
  it('runs on two hosts, one SSH connection each, and is idempotent on the second run', async () => {
    const first = await run();
    const failed = first.results.filter((r) => r.status === 'failed' || r.status === 'unreachable');
    expect(failed.map((r) => `${r.host} ${r.task}: ${r.msg}`)).toEqual([]);
    expect(first.code).toBe(0);
    for (const h of hosts) {
      const out = path.join(dir, h.spec.host);
      expect(statSync(out).mode & 0o777).toBe(0o750);
      expect(readFileSync(path.join(out, 'hello.txt'), 'utf8')).toBe(`hello ${h.spec.host}\n`);
      expect(readFileSync(path.join(out, 'static.txt'), 'utf8')).toBe('static\n');
      expect(statSync(path.join(out, 'static.txt')).mode & 0o777).toBe(0o600);
      expect(readFileSync(path.join(out, 'info.txt'), 'utf8')).toMatch(new RegExp(`^host=${h.spec.host} cpus=\\d+\\n$`));
      expect(h.server.connections).toBe(1);
    }
    const second = await run();
    expect(second.code).toBe(0);
    const changed = second.results.filter((r) => r.changed).map((r) => `${r.host} ${r.task}`);
    expect(changed).toEqual([]);
  });

  it('--check --diff reports the change without making it', async () => {
    const hello = path.join(dir, 'm1', 'hello.txt');
    writeFileSync(hello, 'edited\n');
    const r = await run({ check: true, diff: true });
    expect(r.code).toBe(0);
    const res = r.results.find((e) => e.host === 'm1' && e.task === 'inline file')!;
    expect(res.changed).toBe(true);
    expect(res.result?.diff).toMatchObject({ before: 'edited\n', after: 'hello m1\n' });
    expect(readFileSync(hello, 'utf8')).toBe('edited\n');
  });

  it('become: copy writes through sudo (content on stdin), command runs under sudo', async () => {
    const bin = mkdtempSync(path.join(dir, 'bin-'));
    const log = path.join(bin, 'sudo.log');
    writeFileSync(path.join(bin, 'sudo'), `#!/bin/sh\necho "$*" >> ${log}\nwhile [ "$1" != "--" ]; do shift; done\nshift\nexec "$@"\n`, {
      mode: 0o755,
    });
    const h = await startSshHost({ name: 'b1', exec: shellExecHandler({ pathPrefix: [bin] }) });
    try {
      const inv = path.join(dir, 'inv-become.yml');
      writeFileSync(
        inv,
        `all:\n  hosts:\n    b1:\n      ssh_host: 127.0.0.1\n      ssh_port: ${h.spec.port}\n      ssh_user: ${h.spec.user}\n      ssh_private_key_file: ${h.spec.privateKeyFile}\n      ssh_known_hosts_file: ${h.spec.knownHostsFile}\n`,
      );
      const dest = path.join(dir, 'become-out.txt');
      const pb = path.join(dir, 'become.yml');
      writeFileSync(
        pb,
        `- hosts: all\n  become: true\n  tasks:\n    - copy:\n        content: "root data\\n"\n        dest: ${dest}\n        mode: '0600'\n    - command: id -u\n`,
      );
      const bus = new EventBus();
      const events: TsbmEvent[] = [];
      bus.on((e) => events.push(e));
      const code = await runPlaybook(baseOptions({ playbook: pb, inventories: [inv] }), { bus, redactor: new Redactor() });
      const bad = events.filter((e) => e.type === 'host_result' && e.status === 'failed');
      expect(bad).toEqual([]);
      expect(code).toBe(0);
      expect(readFileSync(dest, 'utf8')).toBe('root data\n');
      expect(statSync(dest).mode & 0o777).toBe(0o600);
      const calls = readFileSync(log, 'utf8');
      expect(calls).toMatch(/-n -- sh -c umask 077/);
      expect(calls).toMatch(/-n -- id -u/);
      expect(calls).not.toContain('root data');
    } finally {
      await h.close();
    }
  });
});
