// Imported Ironic data is data: values, node names and mapping keys that look like templates
// (Handlebars or Jinja, an escape `\{{` already in the value, the `file` and `env` helpers) come
// back through tsbm's loader and executor exactly as Ironic had them, never rendered; Ansible's
// loader reads the same file as unsafe too. Names and keys that are Object.prototype properties
// behave like any other; deep nesting and 150 000 nodes end in a line or in an inventory, not a crash.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TsbmError } from '../../src/errors.js';
import { importIronicNodes } from '../../src/inventory/ironic-import.js';
import { runEvents } from '../helpers/run-events.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();
const opts = { group: 'baremetal', perNodeSecrets: false, source: 'nodes.json' };

const HOSTILE_VALUE = 'x\\{{ env "HOME" }}';
const NODES: Array<{ uuid: string; name: string; driver_info: Record<string, unknown>; instance_info: Record<string, unknown>; properties: Record<string, unknown> }> = [
  {
    uuid: '1be26c0b-03f2-4d2e-ae87-c02d7f33c123',
    name: 'n{{ env "HOME" }}',
    driver_info: {
      redfish_address: 'https://10.0.0.5',
      'k{{ env "HOME" }}': 'key that looks like a template',
      note: HOSTILE_VALUE,
      jinja: "{{ lookup('file', '/etc/passwd') }} {% if true %}x{% endif %} {# c #}",
      constructor: 'c',
      toString: 't',
    },
    instance_info: {
      image_source: 'oci://registry.lab/os:{{ tag }}',
      configdrive: { user_data: '{{ file "/etc/hostname" }}', meta_data: { hostname: '{{ inventory_hostname }}' } },
    },
    properties: { root_device: { name: '/dev/sda' }, list: ['{{ a }}', 1, true, null] },
  },
  { uuid: '2be26c0b-03f2-4d2e-ae87-c02d7f33c123', name: 'toString', instance_info: { image_source: 'oci://r/i:t' }, properties: { cpus: 1 }, driver_info: { redfish_address: 'https://10.0.0.6' } },
  { uuid: '3be26c0b-03f2-4d2e-ae87-c02d7f33c123', name: '__proto__', instance_info: { image_source: 'oci://r/i:t' }, properties: { cpus: 1 }, driver_info: { redfish_address: 'https://10.0.0.7' } },
  { uuid: '4be26c0b-03f2-4d2e-ae87-c02d7f33c123', name: 'constructor', instance_info: { image_source: 'oci://r/i:t' }, properties: { cpus: 1 }, driver_info: { redfish_address: 'https://10.0.0.8' } },
];
/** With an own `__proto__` key in driver_info, as JSON.parse makes it (an object literal's would be the prototype). */
const INPUT = JSON.stringify(NODES).replace('"constructor":"c"', '"__proto__":{"polluted":"no"},"constructor":"c"');

function importToFile(dir: string, text = INPUT): string {
  const file = join(dir, 'inventory.yml');
  writeFileSync(file, importIronicNodes(text, opts).yaml);
  return file;
}

describe('inventory import --from-ironic: data stays data', () => {
  it('round trip through the executor: every value, name and key as Ironic has it, none rendered', async () => {
    const dir = scratch('tsbm-import-data-');
    const parsed = JSON.parse(INPUT) as typeof NODES;
    expect(Object.hasOwn(parsed[0]!.driver_info, '__proto__')).toBe(true);
    const inv = importToFile(dir);
    const playbook = join(dir, 'show.yml');
    writeFileSync(
      playbook,
      `- hosts: all
  gather_facts: false
  tasks:
    - name: show
      debug:
        msg:
          name: "{{ inventory_hostname }}"
          uuid: "{{ ironic_uuid }}"
          driver_info: "{{ driver_info }}"
          instance_info: "{{ instance_info }}"
          properties: "{{ properties }}"
          first: "{{ groups.baremetal.0 }}"
          via_hostvars: "{{ hostvars.toString.driver_info.redfish_address }}"
`,
    );
    const { code, events } = await runEvents({ playbook, inventories: [inv], extraVars: { connection: 'local' } });
    expect(code, JSON.stringify(events.filter((e) => e.type === 'host_result' && e.status !== 'ok'))).toBe(0);
    const shown = new Map<string, Record<string, unknown>>();
    for (const e of events) if (e.type === 'host_result' && e.task === 'show') shown.set(e.host, (e.result as { msg: Record<string, unknown> }).msg);
    expect([...shown.keys()].sort()).toEqual(parsed.map((n) => n.name).sort());
    for (const n of parsed) {
      const got = shown.get(n.name)!;
      expect(got.name).toBe(n.name);
      expect(got.uuid).toBe(n.uuid);
      expect(JSON.stringify(got.driver_info)).toBe(JSON.stringify(n.driver_info));
      expect(got.instance_info).toEqual(n.instance_info);
      expect(got.properties).toEqual(n.properties);
      expect(got.first).toBe('n{{ env "HOME" }}');
      expect(got.via_hostvars).toBe('https://10.0.0.6');
    }
    expect(JSON.stringify(events)).not.toContain(process.env.HOME ?? '/root');
  });

  it('the written file carries the !unsafe tag, and Ansible reads those values as unsafe too', () => {
    const dir = scratch('tsbm-import-data-');
    const inv = importToFile(dir);
    const r = spawnSync('ansible-inventory', ['-i', inv, '--list'], { encoding: 'utf8', env: { ...process.env, ANSIBLE_LOCALHOST_WARNING: 'false' } });
    if (r.error) {
      console.warn(`SKIPPED the Ansible half: ansible-inventory is not installed (${r.error.message})`);
      return;
    }
    const host = JSON.parse(r.stdout)._meta.hostvars['n{{ env "HOME" }}'];
    expect(host.driver_info.note).toEqual({ __ansible_unsafe: HOSTILE_VALUE });
    expect(host.instance_info.configdrive.user_data).toEqual({ __ansible_unsafe: '{{ file "/etc/hostname" }}' });
    expect(host.driver_info['k{{ env "HOME" }}']).toBe('key that looks like a template');
  });

  it('names that are Object.prototype properties are hosts like any other, never "appears twice"', () => {
    const r = importIronicNodes(INPUT, opts);
    expect(r.hosts).toEqual(['n{{ env "HOME" }}', 'toString', '__proto__', 'constructor']);
    const dup = JSON.stringify([{ name: 'toString' }, { name: 'toString' }]);
    expect(() => importIronicNodes(dup, opts)).toThrow(/node toString appears twice/);
  });

  it('a node name with a newline or another control character is refused in one line', () => {
    for (const name of ['n1\nhostname evil', 'n1\r', 'a\u0000b', 'x\u2028y']) {
      const e = (() => {
        try {
          importIronicNodes(JSON.stringify([{ name }]), opts);
        } catch (x) {
          return x as TsbmError;
        }
        return undefined;
      })();
      expect(e, JSON.stringify(name)).toBeInstanceOf(TsbmError);
      expect(e!.message).toMatch(/holds a control character \(U\+[0-9A-F]{4}/);
      expect(e!.message).not.toContain('\n');
    }
  });

  it('deep nesting (objects or lists, 100 000 levels) is a one-line parse error, not a stack overflow', () => {
    for (const [open, close] of [
      ['{"a":', '}'],
      ['[', ']'],
    ] as const) {
      const deep = `${open.repeat(100_000)}1${close.repeat(100_000)}`;
      const text = `[{"name":"n1","driver_info":{"x":${deep}}}]`;
      const e = (() => {
        try {
          importIronicNodes(text, opts);
        } catch (x) {
          return x as TsbmError;
        }
        return undefined;
      })();
      expect(e).toBeInstanceOf(TsbmError);
      expect(e!.message).toBe('nodes.json: node n1: driver_info nests deeper than 32 levels');
    }
  });

  it('150 000 nodes import (no argument list or stack built per node)', () => {
    const nodes = Array.from({ length: 150_000 }, (_, i) => ({ name: `n${i}` }));
    const r = importIronicNodes(JSON.stringify(nodes), opts);
    expect(r.hosts.length).toBe(150_000);
    expect(r.yaml).toContain('n149999:');
  }, 60_000);
});
