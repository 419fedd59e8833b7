import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addPlaybookDirVars, loadInventories } from '../../src/inventory/load.js';
import { inventoryVarsFor, magicVars } from '../../src/inventory/vars.js';

const FX = join(import.meta.dirname, '../fixtures/inventory');
const load = () => loadInventories([join(FX, 'precedence/inventory.yml')]);

describe('inventory variable precedence, level by level', () => {
  const v = inventoryVarsFor(load(), 'h1');
  it('inventory group vars: all < parent', () => expect(v.p1).toBe('inv-parent'));
  it('inventory group vars: parent < child', () => expect(v.p2).toBe('inv-child'));
  it('inventory group vars: siblings by name (alpha < beta)', () => expect(v.p3).toBe('beta'));
  it('inventory group vars: deeper group wins over a shallower one regardless of name', () =>
    expect(v.p12).toBe('aadeep'));
  it('inventory-file group vars < group_vars/all', () => expect(v.p4).toBe('gv-all'));
  it('group_vars/all < group_vars/<parent>', () => expect(v.p5).toBe('gv-parent'));
  it('group_vars/<parent> < group_vars/<child>', () => expect(v.p6).toBe('gv-child'));
  it('group_vars/<group> < inventory-file host vars', () => expect(v.p7).toBe('inv-host'));
  it('inventory-file host vars < host_vars/<host>', () => expect(v.p8).toBe('hv-h1'));
  it('a group_vars/NAME/ folder merges its files in name order', () => expect(v.p11).toBe('second'));
  it('group_vars/NAME.json is read', () => expect(v.p10).toBe('gv-inventory-side'));
  it('maps are replaced, not merged', () => expect(v.d).toEqual({ a: 3 }));
  it('hosts outside a group do not get its vars', () => {
    const v2 = inventoryVarsFor(load(), 'h2');
    expect(v2.p2).toBeUndefined();
    expect(v2.p1).toBe('inv-all');
  });
});

describe('group_vars/host_vars beside the playbook', () => {
  it('override the ones beside the inventory', () => {
    const inv = load();
    addPlaybookDirVars(inv, join(FX, 'precedence/playbook'));
    const v = inventoryVarsFor(inv, 'h1');
    expect(v.p9).toBe('hv-playbook-side');
    expect(v.p10).toBe('gv-playbook-side');
    expect(v.p8).toBe('hv-h1'); // untouched where the playbook side says nothing
  });
});

describe('magic vars', () => {
  it('gives names, groups and the groups map', () => {
    const inv = loadInventories([join(FX, 'ansible-docs/hosts.yml')]);
    const m = magicVars(inv, 'foo.example.com');
    expect(m.inventory_hostname).toBe('foo.example.com');
    expect(m.inventory_hostname_short).toBe('foo');
    expect(m.group_names).toEqual(['east', 'prod', 'webservers']);
    const groups = m.groups as Record<string, string[]>;
    expect(groups.prod).toEqual(['foo.example.com', 'one.example.com', 'two.example.com']);
    expect(groups.ungrouped).toEqual(['mail.example.com']);
    expect(groups.all).toHaveLength(6);
    expect(magicVars(inv, 'mail.example.com').group_names).toEqual([]);
  });

  it('unknown hosts are an error with a suggestion', () => {
    const inv = loadInventories([join(FX, 'ansible-docs/hosts.yml')]);
    expect(() => inventoryVarsFor(inv, 'foo.example.co')).toThrow(/not in the inventory/);
  });

  it('implicit localhost takes group_vars/all and host_vars/localhost', () => {
    const inv = load();
    const v = inventoryVarsFor(inv, 'localhost');
    expect(v).toMatchObject({ p4: 'gv-all', local_var: 'from-host-vars', connection: 'local' });
    expect(inv.groups.get('all')!.hosts).not.toContain('localhost');
  });
});
