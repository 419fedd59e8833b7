// The executor end to end through the real loader, inventory and SSH connections, against
// in-process SSH servers on 127.0.0.1 (commands run by sh on this machine).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listPlaybook, runPlaybook } from '../../src/executor/run.js';
import { EventBus, type TsbmEvent } from '../../src/output/events.js';
import { Redactor } from '../../src/output/redact.js';
import { baseOptions } from '../helpers/executor-model.js';
import { type SshHost, startSshHost } from '../helpers/ssh-host.js';

let hosts: SshHost[] = [];
let dir = '';
let deadPort = 0;

function hostVars(h: SshHost): string {
  const s = h.spec;
  return `      ssh_host: 127.0.0.1
      ssh_port: ${s.port}
      ssh_user: ${s.user}
      ssh_private_key_file: ${s.privateKeyFile}
      ssh_known_hosts_file: ${s.knownHostsFile}
`;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tsbm-exec-it-'));
  hosts = [await startSshHost({ name: 'node1' }), await startSshHost({ name: 'node2' })];
  // A port nobody listens on: bind, note, close.
  deadPort = await new Promise<number>((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => resolve(p));
    });
  });
  writeFileSync(
    path.join(dir, 'inventory.yml'),
    `nodes:
  hosts:
    node1:
${hostVars(hosts[0]!)}    node2:
${hostVars(hosts[1]!)}
dead:
  hosts:
    node3:
      ssh_host: 127.0.0.1
      ssh_port: ${deadPort}
      ssh_private_key_file: ${hosts[0]!.spec.privateKeyFile}
      ssh_connect_timeout: 2
`,
  );
});

afterAll(async () => {
  for (const h of hosts) await h.close();
  rmSync(dir, { recursive: true, force: true });
});

async function run(
  name: string,
  yaml: string,
  o: { options?: Parameters<typeof baseOptions>[0]; signal?: AbortSignal; graceMs?: number; onEvent?: (e: TsbmEvent) => void } = {},
) {
  const file = path.join(dir, `${name}.yml`);
  writeFileSync(file, yaml);
  const bus = new EventBus();
  const events: TsbmEvent[] = [];
  bus.on((e) => {
    events.push(e);
    o.onEvent?.(e);
  });
  const code = await runPlaybook(baseOptions({ playbook: file, inventories: [path.join(dir, 'inventory.yml')], ...o.options }), {
    bus,
    redactor: new Redactor(),
    ...(o.signal ? { signal: o.signal } : {}),
    tuning: { interruptGraceMs: o.graceMs ?? 10_000 },
  });
  const results = events
    .filter((e): e is Extract<TsbmEvent, { type: 'host_result' }> => e.type === 'host_result' && e.item === undefined)
    .map((e) => `${e.host} ${e.task} ${e.status}`);
  const result = (host: string, task: string) =>
    events.find((e): e is Extract<TsbmEvent, { type: 'host_result' }> => e.type === 'host_result' && e.host === host && e.task === task && e.item === undefined);
  return { code, events, results, result };
}

describe('executor over SSH', () => {
  it('two hosts: one fails, the other completes (exit 2)', async () => {
    const r = await run(
      'one-fails',
      `- hosts: nodes
  tasks:
    - name: maybe fail
      command: "{{#if (eq inventory_hostname 'node1')}}false{{else}}true{{/if}}"
    - name: after
      command: echo done {{ inventory_hostname }}
      register: out
    - name: show
      debug:
        msg: "{{ out.stdout }}"
`,
    );
    expect(r.code).toBe(2);
    expect([...r.results].sort()).toEqual(['node1 maybe fail failed', 'node2 after changed', 'node2 maybe fail changed', 'node2 show ok']);
    expect(r.result('node2', 'show')!.result!.msg).toBe('done node2');
    // The event carries the host; the message is only what happened (every output line leads with the host).
    expect(r.result('node1', 'maybe fail')!.host).toBe('node1');
    expect(r.result('node1', 'maybe fail')!.msg).toBe('non-zero return code 1');
  });

  it('an unreachable host is reported as such (exit 4), the others run', async () => {
    const r = await run(
      'unreachable',
      `- hosts: all
  tasks:
    - command: echo hi
`,
    );
    expect(r.code).toBe(4);
    expect(r.results.sort()).toEqual(['node1 command changed', 'node2 command changed', 'node3 command unreachable']);
  });

  it('until succeeds on the third try', async () => {
    const counter = path.join(dir, 'counter');
    const r = await run(
      'until',
      `- hosts: node1
  tasks:
    - name: count
      shell: "n=$(cat ${counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${counter}; echo $n"
      register: c
      until: eq c.stdout "3"
      retries: 5
      delay: 0
`,
    );
    expect(r.code).toBe(0);
    expect(r.events.filter((e) => e.type === 'retry')).toHaveLength(2);
    expect(r.result('node1', 'count')!.result!.attempts).toBe(3);
    expect(readFileSync(counter, 'utf8').trim()).toBe('3');
  });

  it('rescue and always run in order', async () => {
    const r = await run(
      'rescue',
      `- hosts: node1
  tasks:
    - block:
        - name: b1
          command: echo b1
        - name: b2
          command: "false"
        - name: b3
          command: echo b3
      rescue:
        - name: r1
          debug:
            msg: "rescued {{ tsbm_failed_task.name }}"
      always:
        - name: a1
          command: echo a1
    - name: after
      command: echo after
`,
    );
    expect(r.code).toBe(0);
    // the failure the rescue handles reports (and counts) as rescued
    expect(r.results).toEqual(['node1 b1 changed', 'node1 b2 rescued', 'node1 r1 ok', 'node1 a1 changed', 'node1 after changed']);
    expect(r.result('node1', 'r1')!.result!.msg).toBe('rescued b2');
  });

  it('handlers run once at the end of the play', async () => {
    const log = path.join(dir, 'handler.log');
    const r = await run(
      'handlers',
      `- hosts: node1
  tasks:
    - name: first
      command: echo 1
      notify: record
    - name: second
      command: echo 2
      notify: record
    - name: third
      command: echo 3
  handlers:
    - name: record
      shell: echo ran >> ${log}
`,
    );
    expect(r.code).toBe(0);
    expect(r.results).toEqual(['node1 first changed', 'node1 second changed', 'node1 third changed', 'node1 record changed']);
    expect(readFileSync(log, 'utf8')).toBe('ran\n');
  });

  it('serial: 1 runs the hosts in two batches', async () => {
    const r = await run(
      'serial',
      `- hosts: nodes
  serial: 1
  tasks:
    - name: t1
      command: echo 1
    - name: t2
      command: echo 2
`,
    );
    expect(r.results).toEqual(['node1 t1 changed', 'node1 t2 changed', 'node2 t1 changed', 'node2 t2 changed']);
  });

  it('--check runs nothing that changes the host', async () => {
    const marker = path.join(dir, 'check-marker');
    const r = await run(
      'check',
      `- hosts: node1
  tasks:
    - name: touch
      command: touch ${marker}
    - name: mode
      debug:
        msg: "{{ tsbm_check_mode }}"
`,
      { options: { check: true } },
    );
    expect(r.code).toBe(0);
    expect(() => readFileSync(marker)).toThrow();
    expect(r.result('node1', 'touch')!.status).toBe('skipped');
    expect(r.result('node1', 'mode')!.result!.msg).toBe(true);
  });

  it('a task timeout aborts the remote command and fails cleanly', async () => {
    const r = await run(
      'timeout',
      `- hosts: node1
  tasks:
    - name: slow
      command: sleep 30
      timeout: 1
`,
    );
    expect(r.code).toBe(2);
    expect(r.result('node1', 'slow')!.msg).toContain('timed out after 1s');
  });

  it('SIGINT: no new tasks, running ones aborted after the grace period, recap, exit 99', async () => {
    const ac = new AbortController();
    const r = await run(
      'sigint',
      `- hosts: nodes
  tasks:
    - name: long
      command: sleep 300
    - name: never
      command: echo never
`,
      {
        signal: ac.signal,
        graceMs: 200,
        onEvent: (e) => {
          if (e.type === 'host_task_start' && !ac.signal.aborted) setTimeout(() => ac.abort(), 300);
        },
      },
    );
    // `sleep 300` outlasts this test's timeout: ending at all means it was aborted.
    expect(r.code).toBe(99);
    expect(r.results.some((x) => x.includes('never'))).toBe(false);
    expect(r.events.some((e) => e.type === 'recap')).toBe(true);
  });

  it('delegate_to localhost runs on the controller, include_tasks loads at run time', async () => {
    writeFileSync(path.join(dir, 'inc-node1.yml'), '- name: included\n  command: echo included\n');
    const before = hosts[0]!.commands.length;
    const r = await run(
      'delegate',
      `- hosts: node1
  tasks:
    - name: local
      command: echo on-controller
      delegate_to: localhost
      register: l
    - include_tasks: inc-{{ inventory_hostname }}.yml
`,
    );
    expect(r.code).toBe(0);
    expect(r.result('node1', 'local')!.result!.stdout).toBe('on-controller');
    expect(r.results).toEqual(['node1 local changed', 'node1 include_tasks ok', 'node1 included changed']);
    const remote = hosts[0]!.commands.slice(before).join('\n');
    expect(remote).not.toContain('on-controller');
    expect(remote).toContain('included');
  });

  it('secrets stay out of events and remote command lines', async () => {
    const before = hosts[0]!.commands.length;
    const tokenFile = path.join(dir, 'token');
    writeFileSync(tokenFile, 'Tok-9f8e7d6c');
    const r = await run(
      'secrets',
      `- hosts: node1
  vars:
    registry_token: Tok-9f8e7d6c
  tasks:
    - name: use it
      shell: test "$TOKEN_IN" = "$(cat ${tokenFile})" && echo matched
      environment:
        TOKEN_IN: "{{ registry_token }}"
      register: out
    - name: quiet
      command: echo quiet-value-123
      no_log: true
`,
    );
    expect(r.code).toBe(0);
    expect(r.result('node1', 'use it')!.result!.stdout).toBe('matched');
    const remote = hosts[0]!.commands.slice(before).join('\n');
    expect(remote).not.toContain('Tok-9f8e7d6c');
    expect(JSON.stringify(r.events)).not.toContain('quiet-value-123');
  });

  it('listPlaybook prints hosts, tasks and tags', async () => {
    const file = path.join(dir, 'list.yml');
    writeFileSync(
      file,
      `- name: deploy
  hosts: nodes
  tags: [p]
  tasks:
    - name: one
      command: echo 1
      tags: [a]
    - name: two
      command: echo 2
`,
    );
    const out = await listPlaybook(
      baseOptions({ playbook: file, inventories: [path.join(dir, 'inventory.yml')], listHosts: true, listTasks: true, listTags: true }),
    );
    expect(out).toContain('play #1 (nodes): deploy\tTAGS: [p]');
    expect(out).toContain('    hosts (2):\n      node1\n      node2');
    expect(out).toContain('      one\tTAGS: [a]');
    expect(out).toContain('TASK TAGS: [a, p]');
  });
});
