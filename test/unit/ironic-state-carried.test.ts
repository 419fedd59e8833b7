// Ironic's provision state and `protected` carried over (issue 36 point 2): the import writes
// them as host variables under Ironic's names, and the deploy gate reads them for a node tsbm
// has no record of yet: an instance on it (active, rescue...) is refused without --rebuild, a
// protected node by every playbook, with Ironic's reason. A record, once tsbm has one, wins.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { NodeFacts } from '../../src/executor/deps.js';
import { importIronicNodes } from '../../src/inventory/ironic-import.js';
import type { NodeRecord } from '../../src/nodes/types.js';
import { refusal } from '../../src/run/node-gate.js';
import { YAML_TAGS } from '../../src/schema/yaml-tags.js';

const node = (name: string, extra: Record<string, unknown>) => ({
  name,
  uuid: `0000000${name.length}-0000-4000-8000-00000000000${name.slice(-1)}`,
  driver: 'redfish',
  driver_info: { redfish_address: `https://10.0.0.${name.slice(-1)}`, redfish_system_id: '/redfish/v1/Systems/1' },
  instance_info: { image_source: 'oci://registry.example/os:1' },
  ...extra,
});

describe('the Ironic import', () => {
  it('carries provision_state and protected (with its reason) over, and says what they do', () => {
    const text = JSON.stringify([
      node('db1', { provision_state: 'active', protected: true, protected_reason: 'customer database' }),
      node('web2', { provision_state: 'active', protected: false }),
      node('spare3', { provision_state: 'available', protected: false }),
    ]);
    const r = importIronicNodes(text, { group: 'baremetal', perNodeSecrets: false, source: 'nodes.json' });
    const hosts = parse(r.yaml, { customTags: YAML_TAGS }).all.children.baremetal.hosts as Record<string, Record<string, unknown>>;
    expect(hosts.db1).toMatchObject({ provision_state: 'active', protected: true, protected_reason: 'customer database' });
    expect(hosts.web2).toMatchObject({ provision_state: 'active' });
    expect(hosts.web2).not.toHaveProperty('protected');
    expect(hosts.spare3).toMatchObject({ provision_state: 'available' });
    expect(r.notes).toContain(
      "Ironic's provision_state and protected are carried over: a deploy refuses db1, web2 (provision_state: active, as in Ironic) unless --rebuild; every playbook refuses db1 (protected: true, as in Ironic)",
    );
  });
});

const facts = (f: Partial<NodeFacts>): NodeFacts => ({ host: 'web2', key: 'bmc:10.0.0.2:443', protected: false, rebuild: false, onFailure: 'power_off', ...f });
const rec = (r: Partial<NodeRecord>): NodeRecord => ({ key: 'bmc:10.0.0.2:443', name: 'web2', provisionState: 'available', protected: false, updated: 1, version: 1, ...r });

describe('the deploy gate on carried-over state', () => {
  it('a node Ironic had active, not yet recorded by tsbm: a deploy is refused unless --rebuild', () => {
    expect(refusal('deploy', facts({ declaredState: 'active' }), undefined, '/p/deploy-bootc.yml')).toBe(
      'web2 is active (provision_state: active in its variables, as Ironic had it; tsbm has no record of it yet): it has an instance on it; deploy-bootc.yml would reinstall it, so it is refused: pass --rebuild (or set rebuild: true for it) to deploy it',
    );
    expect(refusal('deploy', facts({ declaredState: 'rescue' }), undefined, '/p/deploy-image.yml')).toMatch(/^web2 is rescue .* refused: pass --rebuild/);
    expect(refusal('deploy', facts({ declaredState: 'active', rebuild: true }), undefined, '/p/deploy-bootc.yml')).toBeUndefined();
    expect(refusal('deploy', facts({ declaredState: 'available' }), undefined, '/p/deploy-bootc.yml')).toBeUndefined();
    // Undeploying it is what Ironic's "active -> available" is: allowed.
    expect(refusal('undeploy', facts({ declaredState: 'active' }), undefined, '/p/undeploy.yml')).toBeUndefined();
  });

  it("tsbm's own record, once there, wins over the inventory's word", () => {
    expect(refusal('deploy', facts({ declaredState: 'active' }), rec({ provisionState: 'available' }), '/p/deploy-bootc.yml')).toBeUndefined();
  });

  it('protected by its variables (as Ironic had it): refused by every playbook, with the reason', () => {
    for (const [kind, pb] of [['deploy', 'deploy-bootc.yml'], ['undeploy', 'undeploy.yml']] as const) {
      expect(refusal(kind, facts({ protected: true, protectedReason: 'customer database', rebuild: true }), undefined, `/p/${pb}`)).toMatch(
        /^web2 is protected \(protected: true in its variables: customer database\): .* so it is refused, --rebuild or not$/,
      );
    }
  });
});
