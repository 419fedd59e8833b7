import { join } from 'node:path';
import { Ajv } from 'ajv';
import { Command } from 'commander';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { inventoryCommand } from '../../src/cli/inventory-command.js';
import { register } from '../../src/cli/inventory.js';
import { TsbmError } from '../../src/errors.js';
import { loadInventories } from '../../src/inventory/load.js';
import { inventorySchema } from '../../src/inventory/schema.js';
import { inventoryGraph } from '../../src/inventory/show.js';
import { thrownBy } from '../helpers/thrown.js';

const FX = join(import.meta.dirname, '../fixtures/inventory');

describe('tsbm inventory --list', () => {
  it("prints ansible-inventory's JSON (test/integration/inventory-ini-ansible.test.ts compares the two)", () => {
    const out = JSON.parse(inventoryCommand({ inventory: [join(FX, 'ansible-docs/hosts.yml')], list: true }));
    expect(out._meta.hostvars).toEqual({}); // hosts without vars are left out, as Ansible does
    expect(out.all.children).toEqual(['ungrouped', 'webservers', 'dbservers', 'prod', 'test']);
    expect(out.webservers).toEqual({ hosts: ['foo.example.com', 'bar.example.com'] });
    expect(out.prod).toEqual({ children: ['east'] });
    expect(out.ungrouped).toEqual({ hosts: ['mail.example.com'] });
  });

  it('masks secrets in hostvars and group vars, nested or not', () => {
    const text = inventoryCommand({ inventory: [join(FX, 'secrets/inventory.yml')], list: true });
    for (const secret of ['calvin-secret', 'hunter2hunter', 'c2VjcmV0cHVsbA==', 'sshpass-value'])
      expect(text).not.toContain(secret);
    const out = JSON.parse(text);
    const hv = out._meta.hostvars.node01;
    expect(hv.driver_info.redfish_password).toBe('********');
    expect(hv.driver_info.redfish_username).toBe('admin');
    expect(hv.image_pull_secret).toBe('********');
    expect(hv.ssh_password).toBe('********');
    expect(out.all.vars).toBeUndefined(); // group vars are in hostvars, as in ansible-inventory --list
    const exported = inventoryCommand({ inventory: [join(FX, 'secrets/inventory.yml')], list: true, export: true });
    for (const secret of ['calvin-secret', 'hunter2hunter', 'c2VjcmV0cHVsbA==', 'sshpass-value']) expect(exported).not.toContain(secret);
    expect(JSON.parse(exported).all.vars.image_pull_secret).toBe('********');
  });
});

describe('tsbm inventory --graph / --host', () => {
  it('draws the tree like ansible-inventory', () => {
    const inv = loadInventories([join(FX, 'ansible-docs/hosts.yml')]);
    expect(inventoryGraph(inv)).toBe(
      [
        '@all:',
        '  |--@dbservers:',
        '  |  |--one.example.com',
        '  |  |--three.example.com',
        '  |  |--two.example.com',
        '  |--@prod:',
        '  |  |--@east:',
        '  |  |  |--foo.example.com',
        '  |  |  |--one.example.com',
        '  |  |  |--two.example.com',
        '  |--@test:',
        '  |  |--@west:',
        '  |  |  |--bar.example.com',
        '  |  |  |--three.example.com',
        '  |--@ungrouped:',
        '  |  |--mail.example.com',
        '  |--@webservers:',
        '  |  |--bar.example.com',
        '  |  |--foo.example.com',
        '',
      ].join('\n'),
    );
  });

  it('--host prints merged, masked vars', () => {
    const out = JSON.parse(
      inventoryCommand({ inventory: [join(FX, 'secrets/inventory.yml')], host: 'node01' }),
    );
    expect(out.ansible_host).toBe('10.0.0.5');
    expect(out.driver_info.redfish_password).toBe('********');
  });

  it('option mistakes are TsbmError options', () => {
    const inv = [join(FX, 'ansible-docs/hosts.yml')];
    for (const flags of [
      { inventory: inv },
      { inventory: inv, list: true, graph: true },
      { list: true },
      { inventory: inv, graph: 'nogroup' },
      { inventory: inv, host: 'nohost' },
    ]) {
      const e = thrownBy(() => inventoryCommand(flags));
      expect(e).toBeInstanceOf(TsbmError);
      expect((e as TsbmError).exitCode).toBe(5);
    }
  });

  it('registers the command with its options', () => {
    const program = new Command();
    register(program);
    const cmd = program.commands.find((c) => c.name() === 'inventory')!;
    expect(cmd.options.map((o) => o.long)).toEqual(
      expect.arrayContaining(['--inventory', '--list', '--graph', '--host']),
    );
  });
});

describe('inventorySchema', () => {
  const validate = new Ajv({ strict: false, allowUnionTypes: true }).compile(inventorySchema);
  it('accepts the fixtures Ansible documents', () => {
    for (const f of [
      'ansible-docs/hosts.yml',
      'ansible-docs/ranges-and-vars.yml',
      'precedence/inventory.yml',
      'secrets/inventory.yml',
    ]) {
      expect(validate(parse(readFileSync(join(FX, f), 'utf8'))), f).toBe(true);
    }
  });
  it('rejects the wrong shapes', () => {
    for (const f of [
      'bad/hosts-list.yml',
      'bad/children-list.yml',
      'bad/typo-key.yml',
      'bad/host-vars-list.yml',
    ]) {
      expect(validate(parse(readFileSync(join(FX, f), 'utf8'))), f).toBe(false);
    }
  });
  it('has the published $id', () => {
    expect(inventorySchema.$id).toBe('https://tsbm.dev/schemas/inventory.json');
  });
});
