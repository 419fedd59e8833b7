// INI inventories without Ansible at hand: sections, children declared later, typed values,
// host lines split as shlex does. (inventory-ini-ansible.test.ts compares with ansible-inventory.)
import { describe, expect, it } from 'vitest';
import { emptyInventory, finishInventory } from '../../src/inventory/build.js';
import { parseIniText, shellWords } from '../../src/inventory/parse-ini.js';
import { pythonLiteral } from '../../src/inventory/python-literal.js';
import { inventoryVarsFor } from '../../src/inventory/vars.js';

const load = (text: string) => {
  const inv = emptyInventory();
  parseIniText(inv, 'hosts.ini', text);
  finishInventory(inv);
  return inv;
};

describe('INI inventories', () => {
  it('groups, :vars, :children declared before the child, ranges, ports, inline host vars', () => {
    const inv = load('lone\n[site:children]\nrack1\n[rack1]\nn[01:03] role=db\nweb:2222 x="two words"\n[rack1:vars]\nport=8080\n[all:vars]\nflag=True\n');
    expect(inv.groups.get('site')!.children).toEqual(['rack1']);
    expect(inv.groups.get('rack1')!.hosts).toEqual(['n01', 'n02', 'n03', 'web']);
    expect(inv.groups.get('ungrouped')!.hosts).toEqual(['lone']);
    expect(inventoryVarsFor(inv, 'n02')).toEqual({ flag: true, port: 8080, role: 'db' });
    expect(inventoryVarsFor(inv, 'web')).toEqual({ flag: true, port: 8080, ansible_port: 2222, x: 'two words' });
  });

  it('a group used but never declared is an error at the line that uses it', () => {
    expect(() => load('[a:children]\nb\n')).toThrow(/section \[a:children\] names group "b"/);
    expect(() => load('[b:vars]\nx=1\n')).toThrow(/section \[b:vars\] is for group "b"/);
    expect(() => load('[a]\nh x\n')).toThrow(/expected key=value after host "h", found "x"/);
  });

  it('values are Python literals or text, as Ansible types them', () => {
    expect(pythonLiteral('22')).toEqual({ value: 22 });
    expect(pythonLiteral("[1, 'a']")).toEqual({ value: [1, 'a'] });
    expect(pythonLiteral('None')).toEqual({ value: null });
    for (const text of ['true', '010', '10.0.0.5', 'hello world']) expect(pythonLiteral(text)).toBeUndefined();
  });

  it('host lines split as shlex does: quotes, escapes, # comments', () => {
    expect(shellWords(`h a="x y" b='q' c=d\\ e f=g#comment`)).toEqual(['h', 'a=x y', 'b=q', 'c=d e', 'f=g']);
    expect(() => shellWords('h a="x')).toThrow(/no closing quotation/);
  });
});
