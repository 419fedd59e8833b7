// Keywords an Ansible playbook uses that tsbm once refused: check_mode (task, block, play),
// force_handlers (play), include_role with a templated name (loaded when reached). The
// recap corpus (test/integration/recap-differential.test.ts, files 36-39) compares their
// effect with ansible-playbook's; this checks the loader and `tsbm validate`.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TsbmError } from '../../src/errors.js';
import { loadPlaybook } from '../../src/playbook/load.js';
import type { Block, IncludeTasks, Task } from '../../src/playbook/model.js';
import { validatePlaybooks } from '../../src/playbook/validate.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();

function project(playbook: string): string {
  const d = scratch('tsbm-ansiblekw-');
  mkdirSync(join(d, 'roles', 'vendor_a', 'tasks'), { recursive: true });
  writeFileSync(join(d, 'roles', 'vendor_a', 'tasks', 'main.yml'), '- name: a\n  debug: {msg: a}\n');
  writeFileSync(join(d, 'site.yml'), playbook);
  return join(d, 'site.yml');
}

describe('Ansible keywords', () => {
  it('check_mode on play, block and task; force_handlers on the play', () => {
    const file = project(`- hosts: all
  check_mode: false
  force_handlers: true
  tasks:
    - name: checked
      command: /bin/true
      check_mode: true
    - check_mode: "{{ dry }}"
      block:
        - debug: {msg: x}
`);
    const play = loadPlaybook(file).plays[0]!;
    expect(play.checkMode).toBe(false);
    expect(play.forceHandlers).toBe(true);
    expect((play.tasks[0] as Task).checkMode).toBe(true);
    expect((play.tasks[1] as Block).checkMode).toBe('{{ dry }}');
    expect(validatePlaybooks([file], {})).toEqual([]);
  });

  it('include_role with a templated name is a node loaded at run time; validate accepts it', () => {
    const file = project(`- hosts: all
  vars:
    vendor: vendor_a
  tasks:
    - name: vendor steps
      include_role:
        name: "vendor_{{ vendor | default('a') }}"
        tasks_from: main
        vars: {speed: 3}
`);
    // (the Jinja filter is refused by validate, with the Handlebars to write)
    const errors = validatePlaybooks([file], {}).map((e: TsbmError) => e.oneLine());
    expect(errors.join('\n')).toMatch(/Jinja/);
    const ok = project(`- hosts: all
  vars:
    vendor: a
  tasks:
    - name: vendor steps
      include_role:
        name: "vendor_{{ vendor }}"
        tasks_from: main
        vars: {speed: 3}
`);
    const node = loadPlaybook(ok).plays[0]!.tasks[0] as IncludeTasks;
    expect(node.kind).toBe('include_tasks');
    expect(node.includeRole).toEqual({ name: 'vendor_{{ vendor }}', tasksFrom: 'main', vars: { speed: 3 } });
    expect(validatePlaybooks([ok], {})).toEqual([]);
  });

  it('import_role still needs a literal name, and says to use include_role', () => {
    const file = project(`- hosts: all
  tasks:
    - import_role:
        name: "{{ which }}"
`);
    const errors = validatePlaybooks([file], {}).map((e) => e.oneLine());
    expect(errors).toEqual([expect.stringMatching(/site\.yml:4:\d+: import_role needs a literal role name .*\(use include_role for a templated name\)/)]);
  });
});
