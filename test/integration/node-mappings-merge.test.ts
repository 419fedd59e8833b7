// Ironic's node mappings (driver_info, instance_info, properties) merge key by key across
// group vars < host vars < play vars < -e, through the built CLI; every other variable is
// replaced whole, as in Ansible. Secrets stay masked in `tsbm inventory --host` and in the run.
// (Runs bin/tsbm.js, which uses dist/: `npm run build` first, as `npm test` does.)
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { scratchDirs } from '../helpers/scratch.js';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/tsbm.js');
const scratch = scratchDirs();
const BMC_PW = 'Qv7-group-bmc-pw-3391';
const PULL = 'Pz4-pull-secret-8812';
let dir = '';

function tsbm(args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  dir = scratch('tsbm-merge-');
  mkdirSync(join(dir, 'group_vars'));
  mkdirSync(join(dir, 'host_vars'));
  writeFileSync(
    join(dir, 'inventory.yml'),
    `all:
  children:
    rack1:
      hosts:
        node01: {connection: local}
        node02: {connection: local}
`,
  );
  writeFileSync(
    join(dir, 'group_vars/all.yml'),
    `driver_info:
  redfish_username: admin
  redfish_password: ${BMC_PW}
  redfish_verify_ca: false
  redfish_address: https://group.invalid
instance_info:
  image_source: oci://registry.lab/os:41
  image_pull_secret: ${PULL}
properties:
  root_device: {name: /dev/sda}
  cpu_arch: x86_64
plain_map: {a: 1, b: 2}
`,
  );
  writeFileSync(join(dir, 'group_vars/rack1.yml'), 'driver_info:\n  redfish_system_id: /redfish/v1/Systems/1\n');
  writeFileSync(
    join(dir, 'host_vars/node01.yml'),
    'driver_info:\n  redfish_address: https://10.0.0.11\nproperties:\n  root_device: {serial: S1}\nplain_map: {c: 3}\n',
  );
  writeFileSync(
    join(dir, 'show.yml'),
    `- name: Show
  hosts: all
  gather_facts: false
  vars:
    instance_info:
      image_source: oci://registry.lab/os:42
  tasks:
    - name: Mappings
      debug:
        msg: >-
          {"di": {{ json driver_info }}, "ii": {{ json instance_info }},
          "pr": {{ json properties }}, "pm": {{ json plain_map }} }
`,
  );
  writeFileSync(
    join(dir, 'keys.yml'),
    `- name: Keys
  hosts: all
  gather_facts: false
  vars:
    instance_info: {image_source: oci://registry.lab/os:42}
  tasks:
    - name: Read keys from lower layers
      debug:
        msg: "{{ driver_info.redfish_username }} {{ instance_info.image_pull_secret }} {{ properties.cpu_arch }}"
`,
  );
});

const seen = (stdout: string, host: string): Record<string, Record<string, unknown>> => {
  const ev = stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .find((e) => e.type === 'host_result' && e.host === host && e.task === 'Mappings');
  return JSON.parse(ev.msg);
};

describe('node mappings merge key by key', () => {
  it('tsbm inventory --host shows group < host merged, secrets masked', () => {
    const r = tsbm(['inventory', '-i', 'inventory.yml', '--host', 'node01']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain(BMC_PW);
    expect(r.stdout).not.toContain(PULL);
    const v = JSON.parse(r.stdout);
    expect(v.driver_info).toEqual({
      redfish_username: 'admin',
      redfish_password: '********',
      redfish_verify_ca: false,
      redfish_address: 'https://10.0.0.11', // host_vars beat group_vars
      redfish_system_id: '/redfish/v1/Systems/1', // group_vars/rack1 adds to group_vars/all
    });
    // properties merge one level: root_device itself is replaced, cpu_arch kept
    expect(v.properties).toEqual({ root_device: { serial: 'S1' }, cpu_arch: 'x86_64' });
    // any other mapping is replaced whole, as in Ansible
    expect(v.plain_map).toEqual({ c: 3 });
    const other = JSON.parse(tsbm(['inventory', '-i', 'inventory.yml', '--host', 'node02']).stdout);
    expect(other.driver_info.redfish_address).toBe('https://group.invalid');
    expect(other.plain_map).toEqual({ a: 1, b: 2 });
  });

  it('tsbm inventory --list merges the same way', () => {
    const r = tsbm(['inventory', '-i', 'inventory.yml', '--list']);
    const hv = JSON.parse(r.stdout)._meta.hostvars;
    expect(hv.node01.driver_info.redfish_username).toBe('admin');
    expect(hv.node01.driver_info.redfish_address).toBe('https://10.0.0.11');
    expect(r.stdout).not.toContain(BMC_PW);
  });

  it('play vars and -e merge over the inventory, -e last; secrets stay masked in the run', () => {
    const r = tsbm([
      'run', 'show.yml', '-i', 'inventory.yml', '--output', 'json', '--no-journal',
      '-e', '{"instance_info": {"image_source": "oci://registry.lab/os:43"}, "driver_info": {"redfish_verify_ca": true}}',
      '-e', '{"instance_info": {"configdrive": {"meta_data": {"k": "v"}}}}',
    ]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).not.toContain(BMC_PW);
    expect(r.stdout).not.toContain(PULL);
    const n1 = seen(r.stdout, 'node01');
    expect(n1.di).toEqual({
      redfish_username: 'admin',
      redfish_password: '********',
      redfish_verify_ca: true, // -e beats group_vars
      redfish_address: 'https://10.0.0.11',
      redfish_system_id: '/redfish/v1/Systems/1',
    });
    // group (pull secret) < play (image 42) < first -e (image 43) < second -e (configdrive)
    expect(n1.ii).toEqual({
      image_source: 'oci://registry.lab/os:43',
      image_pull_secret: '********',
      configdrive: { meta_data: { k: 'v' } },
    });
    expect(n1.pr).toEqual({ root_device: { serial: 'S1' }, cpu_arch: 'x86_64' });
    expect(n1.pm).toEqual({ c: 3 });
    expect(seen(r.stdout, 'node02').di?.redfish_address).toBe('https://group.invalid');
  });

  it('tsbm validate and tsbm run\'s own checks know the merged keys (no false "undefined")', () => {
    const e = ['-e', '{"instance_info": {"image_source": "oci://registry.lab/os:43"}, "driver_info": {"redfish_address": "https://x"}}'];
    const v = tsbm(['validate', 'keys.yml', '-i', 'inventory.yml', ...e]);
    expect(v.code, v.stdout + v.stderr).toBe(0);
    const r = tsbm(['run', 'keys.yml', '-i', 'inventory.yml', '--output', 'json', '--no-journal', ...e]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const ev = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((x) => x.type === 'host_result' && x.host === 'node01');
    expect(ev.msg).toBe('admin ******** x86_64');
    // a key no layer has is still reported
    writeFileSync(join(dir, 'missing.yml'), '- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {msg: "{{ instance_info.no_such_key }}"}\n');
    const bad = tsbm(['validate', 'missing.yml', '-i', 'inventory.yml', ...e]);
    expect(bad.code).toBe(4);
    expect(bad.stdout).toMatch(/instance_info\.no_such_key/);
  });

  it('without -e, play vars beat the inventory key by key', () => {
    const r = tsbm(['run', 'show.yml', '-i', 'inventory.yml', '--output', 'json', '--no-journal']);
    expect(r.code, r.stderr).toBe(0);
    expect(seen(r.stdout, 'node02').ii).toEqual({ image_source: 'oci://registry.lab/os:42', image_pull_secret: '********' });
  });
});
