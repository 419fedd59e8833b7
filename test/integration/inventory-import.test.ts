// `tsbm inventory import --from-ironic` against JSON shaped as Ironic and its client print it
// (test/fixtures/ironic, see its README): `baremetal node list --long -f json` (column labels
// as keys), `baremetal node show -f json` printed node after node, and the API's
// GET /v1/nodes/detail. Fields carried over unchanged, secrets to env references and listed,
// and the round trip: import, then `tsbm validate playbooks/deploy-bootc.yml` passes.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TsbmError } from '../../src/errors.js';
import { importIronicNodes } from '../../src/inventory/ironic-import.js';
import { loadInventories } from '../../src/inventory/load.js';
import { YAML_TAGS } from '../../src/schema/yaml-tags.js';
import { inventoryVarsFor } from '../../src/inventory/vars.js';
import { parseYamlText } from '../../src/schema/yaml-source.js';
import { renderValue } from '../../src/template/index.js';
import { scratchDirs } from '../helpers/scratch.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const FX = join(ROOT, 'test', 'fixtures', 'ironic');
const scratch = scratchDirs();
const opts = { group: 'baremetal', perNodeSecrets: false, source: 'nodes.json' };
const read = (f: string) => readFileSync(join(FX, f), 'utf8');
type Hosts = Record<string, Record<string, Record<string, unknown>>>;
const hostsOf = (yaml: string): Hosts => parse(yaml, { customTags: YAML_TAGS }).all.children.baremetal.hosts;
/** The API's field for each node, from the --long listing (labels as keys). */
const longNodes = (JSON.parse(read('node-list-long.json')) as Record<string, unknown>[]).map((n) => ({
  name: n.Name as string | null,
  uuid: n.UUID as string,
  driver_info: n['Driver Info'] as Record<string, unknown>,
  instance_info: n['Instance Info'] as Record<string, unknown>,
  properties: n.Properties as Record<string, unknown>,
}));

function tsbm(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env) {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/tsbm.js'), ...args], { cwd, encoding: 'utf8', env: { ...env, NO_COLOR: '1' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('tsbm inventory import --from-ironic', () => {
  it('node list --long -f json: every node; driver_info, instance_info, properties as Ironic has them but for secrets', () => {
    const r = importIronicNodes(read('node-list-long.json'), opts);
    const hosts = hostsOf(r.yaml);
    // a node without a name goes by its UUID
    expect(Object.keys(hosts)).toEqual(['rack1-node01', 'rack1-node02', 'c3d4e5f6-0718-4293-a4b5-c6d7e8f90a33']);
    for (const n of longNodes) {
      const h = hosts[n.name ?? n.uuid]!;
      expect(h.ironic_uuid).toBe(n.uuid);
      expect(h.driver_info).toEqual({ ...n.driver_info, redfish_password: '{{ env "BMC_PASSWORD" }}' });
      expect(h.properties).toEqual(n.properties);
      expect(h.ramdisk_iso).toBe('http://10.20.0.1:8080/ipa-centos9.iso');
    }
    const ii = hosts['rack1-node01']!.instance_info!;
    expect(ii).toEqual({
      ...longNodes[0]!.instance_info,
      image_pull_secret: '{{ env "PULL_SECRET" }}',
      configdrive: '{{ env "INSTANCE_INFO_CONFIGDRIVE" }}',
    });
    expect(r.secrets).toEqual([
      { env: 'BMC_PASSWORD', field: 'driver_info.redfish_password', hosts: ['rack1-node01', 'rack1-node02', 'c3d4e5f6-0718-4293-a4b5-c6d7e8f90a33'], valueInInput: false },
      { env: 'INSTANCE_INFO_CONFIGDRIVE', field: 'instance_info.configdrive', hosts: ['rack1-node01'], valueInInput: false },
      { env: 'PULL_SECRET', field: 'instance_info.image_pull_secret', hosts: ['rack1-node01', 'rack1-node02'], valueInInput: false },
    ]);
    expect(r.yaml).not.toContain('******');
    // the file says what to export and what is left to do
    expect(r.yaml).toMatch(/^# {3}BMC_PASSWORD: driver_info\.redfish_password \(rack1-node01, rack1-node02, c3d4e5f6-/m);
    expect(r.notes.join('\n')).toMatch(/ssh_host/);
    // nodes with an instance, or in maintenance, are grouped and named so a deploy can leave them out
    const all = parse(r.yaml, { customTags: YAML_TAGS }).all.children;
    expect(Object.keys(all.ironic_active.hosts)).toEqual(['rack1-node01', 'rack1-node02']);
    expect(Object.keys(all.ironic_maintenance.hosts)).toEqual(['c3d4e5f6-0718-4293-a4b5-c6d7e8f90a33']);
    expect(r.notes.join('\n')).toMatch(/rack1-node01, rack1-node02 have an instance in Ironic \(group ironic_active\); c3d4e5f6-\S+ is in maintenance \(group ironic_maintenance\): a deploy wipes what is on a disk; leave them out with --limit 'baremetal:!ironic_active:!ironic_maintenance'/);
  });

  it('a value holding "{{" is kept as Ironic has it: written !unsafe, tsbm reads it back as the same text, unrendered', () => {
    const r = importIronicNodes(read('node-list-long.json'), opts);
    const raw = longNodes[1]!.instance_info.kernel_args;
    expect(r.yaml).toContain(`kernel_args: !unsafe ${JSON.stringify(raw)}`);
    const doc = parseYamlText(r.yaml, 'inv.yml').value as { all: { children: { baremetal: { hosts: Hosts } } } };
    const written = doc.all.children.baremetal.hosts['rack1-node02']?.instance_info?.kernel_args;
    expect(renderValue(written, { vars: {}, baseDir: '/' })).toBe(raw);
    expect(r.notes.join('\n')).toMatch(/1 value\(s\) hold "\{": written with YAML's !unsafe tag/);
  });

  it('node show -f json, node after node, and the API\'s {"nodes": [...]}: the same hosts and vars', () => {
    const fromLong = hostsOf(importIronicNodes(read('node-list-long.json'), opts).yaml);
    const fromShow = hostsOf(importIronicNodes(read('node-show-each.json'), opts).yaml);
    expect(Object.keys(fromShow)).toEqual(['rack1-node01', 'rack1-node02']);
    for (const name of Object.keys(fromShow)) expect(fromShow[name]).toEqual(fromLong[name]);
    const fromApi = hostsOf(importIronicNodes(read('nodes-detail-api.json'), opts).yaml);
    expect(fromApi).toEqual({ 'rack1-node01': fromLong['rack1-node01'] });
    // one `node show` alone (an object, not a list)
    const one = read('node-show-each.json').split(/\n(?=\{)/)[0]!;
    expect(Object.keys(hostsOf(importIronicNodes(one, opts).yaml))).toEqual(['rack1-node01']);
  });

  it('a secret whose value is in the input is left out all the same, and said so', () => {
    const nodes = JSON.parse(read('node-list-long.json')) as Record<string, Record<string, unknown>>[];
    nodes[0]!['Driver Info']!.redfish_password = 'Real-BMC-pass-7731';
    nodes[0]!['Instance Info']!.image_pull_secret = 'dXNlcjpzM2NyM3Q=';
    const r = importIronicNodes(JSON.stringify(nodes), opts);
    expect(r.yaml).not.toContain('Real-BMC-pass-7731');
    expect(r.yaml).not.toContain('dXNlcjpzM2NyM3Q=');
    expect(r.secrets.find((s) => s.env === 'BMC_PASSWORD')).toMatchObject({ valueInInput: true });
  });

  it('--per-node-secrets: one variable per node and secret', () => {
    const r = importIronicNodes(read('node-show-each.json'), { ...opts, perNodeSecrets: true });
    expect(hostsOf(r.yaml)['rack1-node02']!.driver_info!.redfish_password).toBe('{{ env "BMC_PASSWORD_RACK1_NODE02" }}');
    expect(r.secrets.map((s) => s.env)).toContain('PULL_SECRET_RACK1_NODE01');
  });

  it('the API reference\'s own sample node (fake driver, IPMI, nothing to deploy) imports, with what is missing said', () => {
    // shaped as api-ref/source/samples/node-show-response.json
    const sample = {
      allocation_uuid: null, boot_interface: null, chassis_uuid: null, clean_step: {}, conductor: 'compute1.localdomain',
      conductor_group: 'group-1', console_enabled: false, driver: 'fake', driver_info: { ipmi_password: '******', ipmi_username: 'ADMIN' },
      driver_internal_info: { clean_steps: null }, extra: {}, instance_info: {}, instance_uuid: null, maintenance: false,
      name: 'test_node_classic', network_interface: 'flat', power_state: 'power off', properties: {}, provision_state: 'available',
      resource_class: 'bm-large', traits: [], uuid: '0b9e5c3e-3d5f-4a0e-9c2b-7f1e2d3c4b5a',
      links: [{ href: 'http://127.0.0.1:6385/v1/nodes/0b9e5c3e-3d5f-4a0e-9c2b-7f1e2d3c4b5a', rel: 'self' }],
    };
    const r = importIronicNodes(JSON.stringify(sample), opts);
    expect(hostsOf(r.yaml).test_node_classic).toEqual({
      ironic_uuid: sample.uuid,
      driver_info: { ipmi_password: '{{ env "BMC_PASSWORD" }}', ipmi_username: 'ADMIN' },
      provision_state: 'available',
    });
    const notes = r.notes.join('\n');
    expect(notes).toMatch(/test_node_classic \(driver fake\) has no driver_info\.redfish_address/);
    expect(notes).toMatch(/ramdisk_iso is not known for test_node_classic/);
    expect(notes).toMatch(/instance_info\.image_source is not set for test_node_classic/);
  });

  it.each([
    ['not JSON', 'baremetal: command not found\n', /nodes\.json: not Ironic JSON/],
    ['no nodes', '[]', /nodes\.json: no nodes in it/],
    ['a formatted dict', JSON.stringify([{ UUID: 'u1', Name: 'n1', 'Driver Info': "redfish_address='https://x', redfish_username='a'" }]), /node n1: driver_info is text .* not a JSON object \(your client formatted it; use `baremetal node show NODE -f json`/],
    ['a node twice', JSON.stringify([{ uuid: 'u1', name: 'n1' }, { uuid: 'u2', name: 'n1' }]), /node n1 appears twice/],
  ])('%s is one clear error', (_, text, message) => {
    let err: unknown;
    try {
      importIronicNodes(text, opts);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TsbmError);
    expect((err as TsbmError).oneLine()).toMatch(message);
  });

  it('round trip through the CLI: import, then validate deploy-bootc.yml passes and the inventory loads', () => {
    const dir = scratch('tsbm-ironic-');
    const inv = join(dir, 'inventory.yml');
    const imp = tsbm(['inventory', 'import', '--from-ironic', join(FX, 'node-list-long.json'), '-o', inv], dir);
    expect(imp.code, imp.stderr).toBe(0);
    expect(imp.stdout).toBe('');
    expect(imp.stderr).toMatch(/^imported 3 nodes into .*inventory\.yml\nsecrets, read from the environment at run time \(export them first\):\n {2}BMC_PASSWORD {2}driver_info\.redfish_password of 3 nodes\n/);
    const validate = tsbm(['validate', join(ROOT, 'playbooks/deploy-bootc.yml'), '-i', inv], dir);
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    // the values a deploy reads, as tsbm sees them
    const env = { ...process.env, BMC_PASSWORD: 'Bmc-secret-4411' };
    const host = tsbm(['inventory', '-i', inv, '--host', 'rack1-node01'], dir, env);
    expect(host.code, host.stderr).toBe(0);
    expect(JSON.parse(host.stdout)).toMatchObject({ driver_info: { redfish_address: 'https://10.20.0.11' }, instance_info: { image_source: 'oci://registry.example.com/os/fedora-bootc:41' } });
    expect(inventoryVarsFor(loadInventories([inv]), 'rack1-node01').ramdisk_iso).toBe('http://10.20.0.1:8080/ipa-centos9.iso');
    // an existing file is not replaced without --force; stdin works
    const again = tsbm(['inventory', 'import', '--from-ironic', join(FX, 'node-list-long.json'), '-o', inv], dir);
    expect(again.code).toBe(5);
    expect(again.stderr).toMatch(/--output .*inventory\.yml exists \(add --force to replace it/);
    const piped = spawnSync(process.execPath, [join(ROOT, 'bin/tsbm.js'), 'inventory', 'import', '--from-ironic', '-'], {
      cwd: dir,
      input: read('node-show-each.json'),
      encoding: 'utf8',
    });
    expect(piped.status, piped.stderr).toBe(0);
    expect(Object.keys(hostsOf(piped.stdout))).toEqual(['rack1-node01', 'rack1-node02']);
    writeFileSync(join(dir, 'piped.yml'), piped.stdout);
    expect(tsbm(['validate', join(ROOT, 'playbooks/deploy-bootc.yml'), '-i', join(dir, 'piped.yml')], dir).code).toBe(0);
  });
});
