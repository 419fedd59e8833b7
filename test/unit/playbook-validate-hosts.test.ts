// validate's per-host checks on real loaded playbooks and inventories: what the run provides
// (registered values, set_fact, facts, loops, -e, role defaults, include_tasks, guards) is never
// flagged; a read that the run would fail on is flagged to the last key, for exactly the hosts
// it fails for; hosts that read the same values share one evaluation.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addPlaybookDirVars, loadInventories } from '../../src/inventory/load.js';
import { validatePlaybooks, type ValidateOptions } from '../../src/playbook/validate.js';
import { checkPattern, validateInventory } from '../../src/playbook/validate-inventory.js';

const dir = mkdtempSync(join(tmpdir(), 'tsbm-vhosts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function files(tree: Record<string, string>): void {
  for (const [p, text] of Object.entries(tree)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), text);
  }
}

function validate(playbook: string, inventory: string, extra: Partial<ValidateOptions> = {}): string[] {
  const inv = loadInventories([join(dir, inventory)]);
  addPlaybookDirVars(inv, dir);
  const errors = validatePlaybooks([join(dir, playbook)], {
    checkPattern,
    inventory: validateInventory(inv, dir),
    ...extra,
  });
  return errors.map((e) => `${e.pos?.file.replace(`${dir}/`, '')}:${e.pos?.line} ${e.message}`);
}

files({
  'inv.yml': `all:
  vars:
    kind: disk
    instance_info:
      image_source: oci://r/os:1
      root_device: { name: /dev/vda }
      user_data: "hostname {{ inventory_hostname }}"
  hosts:
    n1:
      kind: iso
      instance_info: { image_source: oci://r/os:1, boot_iso: http://x/i.iso }
    n2: {}
    n3: {}
`,
  'roles/boot/defaults/main.yml': `iso: "{{ instance_info.boot_iso }}"
knobs: { timeout: 30 }
`,
  'roles/boot/tasks/main.yml': `- name: Boot the ISO
  debug: { msg: "{{ iso }} {{ knobs.timeout }}" }
  when: "eq kind 'iso'"
`,
  'roles/isoboot/defaults/main.yml': `iso: "{{ instance_info.boot_iso }}"
`,
  'roles/isoboot/tasks/main.yml': `- name: Boot the ISO on every host
  debug: { msg: "{{ iso }}" }
`,
  'tasks/inc.yml': `- name: In the include
  debug: { msg: "{{ out.rc }} {{ inc_var.key }} {{ instance_info.image_source }}" }
`,
  'good.yml': `- name: Everything the run provides
  hosts: all
  gather_facts: true
  roles: [boot]
  tasks:
    - name: Facts
      debug: { msg: "{{ facts.memory.total_mb }} {{ ansible_facts.system_uuid }}" }
    - name: Register
      command: echo hi
      register: out
      until: "eq out.rc 0"
      retries: 2
    - name: Read the registered result, any depth
      debug: { msg: "{{ out.stdout }} {{ out.json.items.whatever }}" }
    - name: Set a fact
      set_fact:
        made: { nested: { key: 1 } }
    - name: Read it
      debug: { msg: "{{ made.nested.key }} {{ made.anything.at.all }}" }
    - name: Loop over maps
      debug: { msg: "{{ disk.name }} {{ idx }}" }
      loop: [{ name: vda }]
      loop_control: { loop_var: disk, index_var: idx }
    - name: Loop over the inventory
      debug: { msg: "{{ item.name }}" }
      loop: "{{ groups.all }}"
    - name: Extra vars to the last key
      debug: { msg: "{{ extra.map.key }}" }
    - name: Guarded by when
      debug: { msg: "{{ instance_info.boot_iso }}" }
      when: defined instance_info.boot_iso
    - name: Guarded by a value only some hosts have
      debug: { msg: "{{ instance_info.boot_iso }}" }
      when: "eq kind 'iso'"
    - name: Guarded in the template
      debug: { msg: "{{#if (defined instance_info.boot_iso)}}{{ instance_info.boot_iso }}{{/if}} {{ default instance_info.nope.deeper 'x' }}" }
    - block:
        - name: Inside a guarded block
          debug: { msg: "{{ instance_info.boot_iso }} {{ block_var.a }}" }
      when: defined instance_info.boot_iso
      vars:
        block_var: { a: 1 }
    - name: Another host's variables
      debug: { msg: "{{ hostvars.n1.instance_info.boot_iso }} {{ hostvars.n2.out.rc }}" }
    - name: Include
      include_tasks: tasks/inc.yml
      vars:
        inc_var: { key: v }
    - block:
        - command: /bin/false
      rescue:
        - debug: { msg: "{{ tsbm_failed_result.msg }} {{ tsbm_failed_task.name }}" }
  handlers:
    - name: h
      debug: { msg: "{{ out.rc }}" }
`,
  'bad.yml': `- name: What the run would fail on
  hosts: all
  roles: [isoboot]
  tasks:
    - name: Dotted, some hosts
      debug: { msg: "{{ instance_info.boot_iso }}" }
    - name: Deeper than there is
      debug: { msg: "{{ instance_info.root_device.name.more }}" }
    - name: Wrong guard
      debug: { msg: "{{ instance_info.boot_iso }}" }
      when: not (defined instance_info.boot_iso)
    - name: Unknown host
      debug: { msg: "{{ hostvars.n9.kind }}" }
    - name: Loop source
      debug: { msg: "{{ item }}" }
      loop: "{{ instance_info.disks }}"
    - name: In a condition
      debug: { msg: x }
      when: "eq instance_info.boot_iso 'x'"
    - name: A role's defaults are its own
      debug: { msg: "{{ iso }}" }
`,
});

describe('per-host checks: what the run provides is never flagged', () => {
  it('registered, set_fact, facts, loops, -e, role defaults, include_tasks, guards, hostvars', () => {
    expect(validate('good.yml', 'inv.yml', { extraVars: { extra: { map: { key: 1 } } } })).toEqual([]);
  });

  it('without the extra var only it is named', () => {
    expect(validate('good.yml', 'inv.yml')).toEqual([
      'good.yml:28 undefined variable "extra.map.key" ("extra" is not defined) in task "Extra vars to the last key" for hosts n1, n2, n3',
    ]);
  });
});

describe('per-host checks: reads the run would fail on', () => {
  it('each is named to the last key, for exactly the hosts it fails for', () => {
    expect(validate('bad.yml', 'inv.yml')).toEqual([
      'bad.yml:6 undefined variable "instance_info.boot_iso" in task "Dotted, some hosts" for hosts n2, n3',
      // n1's own instance_info merges with the group's (node mappings merge key by key): it has root_device too
      'bad.yml:8 undefined variable "instance_info.root_device.name.more" in task "Deeper than there is" for hosts n1, n2, n3',
      'bad.yml:10 undefined variable "instance_info.boot_iso" in task "Wrong guard" for hosts n2, n3',
      'bad.yml:13 undefined variable "hostvars.n9.kind" ("hostvars.n9" is not defined) in task "Unknown host" for hosts n1, n2, n3',
      'bad.yml:16 undefined variable "instance_info.disks" in task "Loop source" for hosts n1, n2, n3',
      'bad.yml:19 undefined variable "instance_info.boot_iso" in task "In a condition" for hosts n2, n3',
      'bad.yml:21 undefined variable "iso" in task "A role\'s defaults are its own" for hosts n1, n2, n3',
      'roles/isoboot/tasks/main.yml:2 undefined variable "instance_info.boot_iso" (read through "iso") in task "Boot the ISO on every host" for hosts n2, n3',
    ]);
  });

  it('-e replaces a whole variable, as at run time', () => {
    const errors = validate('bad.yml', 'inv.yml', {
      extraVars: { instance_info: { boot_iso: 'x', root_device: { name: { more: 1 } }, disks: [] } },
    });
    expect(errors).toEqual([
      'bad.yml:13 undefined variable "hostvars.n9.kind" ("hostvars.n9" is not defined) in task "Unknown host" for hosts n1, n2, n3',
      'bad.yml:21 undefined variable "iso" in task "A role\'s defaults are its own" for hosts n1, n2, n3',
    ]);
  });
});

describe('per-host checks at fleet size', () => {
  it('hosts reading the same values share one evaluation per task', () => {
    const hosts = Array.from({ length: 500 }, (_, i) => `    h${i}: { ssh_port: ${2000 + i} }`).join('\n');
    files({
      'fleet.yml': `all:\n  vars:\n    instance_info: { image_source: oci://r/os:1 }\n  hosts:\n${hosts}\n`,
    });
    const stats = { evaluations: 0, reused: 0 };
    const errors = validate('bad.yml', 'fleet.yml', { stats });
    expect(errors[0]).toMatch(/^bad.yml:6 undefined variable "instance_info.boot_iso" in task "Dotted, some hosts" for hosts h0, h1, h2 and 497 more$/);
    // 7 tasks (8 with the role's): a handful of evaluations each, not 500
    expect(stats.evaluations).toBeLessThan(8 * 3);
    expect(stats.reused).toBeGreaterThan(7 * 490);
  });
});
