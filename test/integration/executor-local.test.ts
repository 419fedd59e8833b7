// Playbooks through the real loader on the implicit localhost (local connection): the
// controller-intrinsic modules in their YAML forms, roles, handlers and include_tasks.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPlaybook } from '../../src/executor/run.js';
import { EventBus, type TsbmEvent } from '../../src/output/events.js';
import { Redactor } from '../../src/output/redact.js';
import { baseOptions } from '../helpers/executor-model.js';

let dir = '';
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tsbm-exec-local-'));
  mkdirSync(path.join(dir, 'roles/greet/tasks'), { recursive: true });
  mkdirSync(path.join(dir, 'roles/greet/defaults'), { recursive: true });
  mkdirSync(path.join(dir, 'roles/greet/handlers'), { recursive: true });
  writeFileSync(path.join(dir, 'roles/greet/defaults/main.yml'), 'greeting: hello\nwho: role-default\n');
  writeFileSync(
    path.join(dir, 'roles/greet/tasks/main.yml'),
    `- name: greet
  command: echo {{ greeting }} {{ who }}
  register: greeted
  notify: greeted
`,
  );
  writeFileSync(path.join(dir, 'roles/greet/handlers/main.yml'), '- name: greeted\n  debug:\n    msg: handler ran\n');
  writeFileSync(path.join(dir, 'extra.yml'), '- name: from include\n  set_fact:\n    included: true\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(yaml: string, extraVars: Record<string, unknown> = {}) {
  const file = path.join(dir, 'site.yml');
  writeFileSync(file, yaml);
  const bus = new EventBus();
  const events: TsbmEvent[] = [];
  bus.on((e) => events.push(e));
  const code = await runPlaybook(baseOptions({ playbook: file, inventories: [], extraVars }), { bus, redactor: new Redactor() });
  const results = events
    .filter((e): e is Extract<TsbmEvent, { type: 'host_result' }> => e.type === 'host_result' && e.item === undefined)
    .map((e) => `${e.task} ${e.status}${e.status === 'ok' && typeof e.result?.msg === 'string' ? ` ${e.result.msg}` : ''}`);
  return { code, events, results };
}

describe('executor on localhost through the real loader', () => {
  it('roles, handlers, set_fact, assert, include_tasks, meta and free-form fail', async () => {
    const r = await run(
      `- hosts: localhost
  vars:
    who: play-var
  roles:
    - greet
  tasks:
    - name: check role output
      assert:
        that:
          - eq greeted.stdout "hello play-var"
    - meta: flush_handlers
    - include_tasks: extra.yml
    - name: show
      debug:
        msg: "included={{ included }}"
    - name: short pause
      pause:
        seconds: 0.01
    - name: stop here
      fail: stopped on purpose
      when: stop_now
`,
      { stop_now: true },
    );
    expect(r.results).toEqual([
      'greet changed',
      'check role output ok All assertions passed',
      'meta ok meta: flush_handlers',
      'greeted ok handler ran',
      `include_tasks ok included: ${path.join(dir, 'extra.yml')}`,
      'from include ok',
      'show ok included=true',
      'short pause ok paused for 0.01s',
      'stop here failed',
    ]);
    expect(r.code).toBe(2);
  });
});
