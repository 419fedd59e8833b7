// Issue 3 end to end: `tsbm run` (the built CLI) against three real OpenSSH hosts, each in
// its own network namespace, with command, copy, template, wait_for and facts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Netns, createNetns, destroyAllNetns } from './lab/netns.js';
import { haveTool, isRoot } from './lab/run.js';
import { type ClientKey, type Sshd, makeClientKey, prepareSshd, stopAllSshd } from './lab/sshd.js';

const built = existsSync('dist/cli/main.js');
const ready =
  isRoot && built && ['ip', 'nsenter', 'ssh-keygen'].every(haveTool) && existsSync('/usr/sbin/sshd');
const reason = 'needs root, `npm run build` (dist/), iproute2, openssh-server';

const TOKEN = 'tok-e2e-Zq8VwX4s1';

const PLAYBOOK = `
- name: core e2e on three real hosts
  hosts: ramdisks
  gather_facts: false
  tasks:
    - name: gather facts
      facts:
      register: gathered

    - name: make the host's directory
      command:
        argv: [mkdir, -p, "{{ base }}/{{ inventory_hostname }}"]

    - name: copy content
      copy:
        content: "hello {{ inventory_hostname }}\\n"
        dest: "{{ base }}/{{ inventory_hostname }}/hello.txt"
        mode: "0640"

    - name: render a template
      template:
        src: motd.hbs
        dest: "{{ base }}/{{ inventory_hostname }}/motd"

    - name: the host's own sshd port is open (probed from the host)
      wait_for:
        host: "{{ ssh_host }}"
        port: 22
        timeout: 10

    - name: the rendered file has the address
      wait_for:
        path: "{{ base }}/{{ inventory_hostname }}/motd"
        search_regex: "addr={{ ssh_host }}"
        timeout: 10

    - name: a secret travels to the host only as file content
      copy:
        content: "token={{ api_token }}\\n"
        dest: "{{ base }}/{{ inventory_hostname }}/token"
        mode: "0600"

    - name: read the MAC over SSH
      command: cat /sys/class/net/eth0/address
      register: mac
      changed_when: false
`;

describe.skipIf(!ready)(
  `core: tsbm run against three real OpenSSH hosts (${reason})`,
  { timeout: 180_000 },
  () => {
    let dir: string;
    let base: string;
    let key: ClientKey;
    const nets: Netns[] = [];
    const hosts: Sshd[] = [];

    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'tsbm-core-e2e-'));
      base = join(dir, 'out');
      key = makeClientKey(join(dir, 'client'));
      for (let i = 1; i <= 3; i++) {
        const ns = createNetns(`core${i}`, i);
        nets.push(ns);
        const s = prepareSshd(ns, join(dir, `sshd${i}`), [key.publicKey], { logCommands: true });
        s.start();
        hosts.push(s);
      }
      writeFileSync(join(dir, 'known_hosts'), `${hosts.map((h) => h.knownHostsLine).join('\n')}\n`);
      writeFileSync(join(dir, 'motd.hbs'), 'host={{ inventory_hostname }} addr={{ ssh_host }}\n');
      writeFileSync(join(dir, 'play.yml'), PLAYBOOK);
      const inv = [
        'all:',
        '  children:',
        '    ramdisks:',
        '      vars:',
        `        base: ${base}`,
        `        api_token: ${TOKEN}`,
        '        ssh_user: root',
        `        ssh_private_key_file: ${key.privateKeyFile}`,
        `        ssh_known_hosts_file: ${join(dir, 'known_hosts')}`,
        '      hosts:',
        ...hosts.map((h, i) => `        rd${i + 1}:\n          ssh_host: ${h.address}`),
        '',
      ].join('\n');
      writeFileSync(join(dir, 'inventory.yml'), inv);
    });

    afterAll(() => {
      stopAllSshd();
      destroyAllNetns();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const run = (...extra: string[]) =>
      spawnSync(
        'node',
        ['bin/tsbm.js', 'run', join(dir, 'play.yml'), '-i', join(dir, 'inventory.yml'), ...extra],
        {
          encoding: 'utf8',
          timeout: 120_000,
          env: { ...process.env, NO_COLOR: '1' },
        },
      );

    it('runs the playbook on all three hosts and succeeds', () => {
      const r = run('--output', 'json');
      expect(r.stderr).toBe(r.status === 0 ? r.stderr : `exit ${r.status}\n${r.stdout}`);
      expect(r.status).toBe(0);
      for (let i = 1; i <= 3; i++) {
        const d = join(base, `rd${i}`);
        expect(readFileSync(join(d, 'hello.txt'), 'utf8')).toBe(`hello rd${i}\n`);
        expect(statSync(join(d, 'hello.txt')).mode & 0o777).toBe(0o640);
        expect(readFileSync(join(d, 'motd'), 'utf8')).toBe(`host=rd${i} addr=${hosts[i - 1]!.address}\n`);
      }
      // Each host answered from its own namespace: the MAC the command read is that namespace's.
      const events = r.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const text = JSON.stringify(events);
      for (const ns of nets) expect(text).toContain(ns.mac);
    });

    it('a second run changes nothing (copy and template are idempotent)', () => {
      const r = run('--output', 'plain');
      if (process.env.TSBM_E2E_SHOW) console.log(r.stdout);
      expect(r.status).toBe(0);
      const recap = r.stdout.slice(r.stdout.lastIndexOf('RECAP'));
      for (let i = 1; i <= 3; i++) expect(recap).toMatch(new RegExp(`rd${i}\\b.*changed=(\\d+)`));
      const changed = [...recap.matchAll(/changed=(\d+)/g)].map((m) => Number(m[1]));
      // only the mkdir command reports a change
      expect(changed.every((c) => c <= 1)).toBe(true);
    });
  },
);
