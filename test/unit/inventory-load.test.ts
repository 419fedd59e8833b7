import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TsbmError } from '../../src/errors.js';
import { loadInventories } from '../../src/inventory/load.js';
import { expandHostRange } from '../../src/inventory/ranges.js';
import { inventoryVarsFor } from '../../src/inventory/vars.js';

const FX = join(import.meta.dirname, '../fixtures/inventory');
const fx = (p: string) => join(FX, p);

function parseFails(paths: string[]): TsbmError {
  try {
    loadInventories(paths);
  } catch (e) {
    expect(e).toBeInstanceOf(TsbmError);
    expect((e as TsbmError).kind).toBe('parse');
    return e as TsbmError;
  }
  throw new Error('expected a parse error');
}

describe('host ranges', () => {
  it('expands numeric ranges keeping zero padding', () => {
    expect(expandHostRange('node[01:03]')).toEqual(['node01', 'node02', 'node03']);
    expect(expandHostRange('n[8:10]')).toEqual(['n8', 'n9', 'n10']);
    expect(expandHostRange('web[1:9:4]')).toEqual(['web1', 'web5', 'web9']);
  });
  it('expands letters and several ranges', () => {
    expect(expandHostRange('rack[a:c]-[1:2]')).toEqual([
      'racka-1',
      'racka-2',
      'rackb-1',
      'rackb-2',
      'rackc-1',
      'rackc-2',
    ]);
    expect(expandHostRange('plain')).toEqual(['plain']);
  });
  it('rejects bad ranges', () => {
    expect(() => expandHostRange('n[3:1]')).toThrow(/start is after end/);
    expect(() => expandHostRange('n[a:3]')).toThrow(/numbers or single letters/);
    expect(() => expandHostRange('n[1]')).toThrow(/START:END/);
  });
});

describe('loadInventories: Ansible documentation inventories load unchanged', () => {
  it('groups, nested children, implicit all and ungrouped', () => {
    const inv = loadInventories([fx('ansible-docs/hosts.yml')]);
    expect([...inv.hosts.keys()]).toEqual([
      'mail.example.com',
      'foo.example.com',
      'bar.example.com',
      'one.example.com',
      'two.example.com',
      'three.example.com',
    ]);
    // east and west have parents, so (as in Ansible) they are not direct children of all
    expect(inv.groups.get('all')!.children.sort()).toEqual([
      'dbservers',
      'prod',
      'test',
      'ungrouped',
      'webservers',
    ]);
    expect(inv.groups.get('ungrouped')!.hosts).toEqual(['mail.example.com']);
    expect(inv.groups.get('prod')!.children).toEqual(['east']);
    expect(inv.hosts.get('foo.example.com')!.groups.sort()).toEqual(['all', 'east', 'prod', 'webservers']);
    expect(inv.hosts.get('mail.example.com')!.groups.sort()).toEqual(['all', 'ungrouped']);
    expect(inv.sources).toEqual([fx('ansible-docs/hosts.yml')]);
  });

  it('ranges, host vars and group vars through children', () => {
    const inv = loadInventories([fx('ansible-docs/ranges-and-vars.yml')]);
    expect(inv.groups.get('webfarm')!.hosts).toHaveLength(50);
    expect(inv.groups.get('webfarm')!.hosts[0]).toBe('www01.example.com');
    expect(inv.groups.get('databases')!.hosts).toEqual(
      ['a', 'b', 'c', 'd', 'e', 'f'].map((c) => `db-${c}.example.com`),
    );
    const v = inventoryVarsFor(inv, 'host2');
    expect(v).toMatchObject({ http_port: 303, ntp_server: 'ntp.atlanta.example.com', escape_pods: 2 });
    expect(inventoryVarsFor(inv, 'host3')).toMatchObject({ some_server: 'foo.southeast.example.com' });
    expect(inv.groups.has('northeast')).toBe(true); // empty child groups exist
    expect(inventoryVarsFor(inv, 'badwolf.example.com')).toEqual({ ansible_port: 5309 });
    expect(inventoryVarsFor(inv, 'jumper')).toEqual({ ansible_port: 5555, ansible_host: '192.0.2.50' });
    expect(inv.hosts.get('host3')!.groups.sort()).toEqual(['all', 'raleigh', 'southeast', 'usa']);
  });
});

describe('loadInventories: sources', () => {
  it('merges several -i in order (later wins, hosts and groups add up)', () => {
    const inv = loadInventories([fx('merge/first.yml'), fx('merge/second.yml')]);
    expect(inv.groups.get('rack1')!.hosts).toEqual(['node01', 'node02']);
    expect(inventoryVarsFor(inv, 'node01')).toMatchObject({
      ansible_host: '10.0.0.1',
      role: 'second',
      rack: 'one',
    });
    expect(inv.groups.get('rack2')!.hosts).toEqual(['node03']);
    expect(inv.groups.get('all')!.children).toContain('rack2');
  });

  it('loads every *.yml/*.yaml of a directory and its group_vars', () => {
    const inv = loadInventories([fx('dir-inv')]);
    expect([...inv.hosts.keys()]).toEqual(['a1', 'a2']);
    expect(inventoryVarsFor(inv, 'a2')).toEqual({ from_dir: 'yes' });
  });

  it('accepts an empty file', () => {
    const inv = loadInventories([fx('bad/../dir-inv/README.md').replace('README.md', '10-base.yml')]);
    expect(inv.hosts.size).toBe(1);
  });
});

describe('loadInventories: structural errors point at file:line:col', () => {
  it('hosts given as a list', () => {
    const e = parseFails([fx('bad/hosts-list.yml')]);
    expect(e.pos).toEqual({ file: fx('bad/hosts-list.yml'), line: 5, col: 9 });
    expect(e.message).toContain('hosts of group "rack1" must be a mapping');
    expect(e.hint).toContain('node01:');
  });
  it('children given as a list', () => {
    const e = parseFails([fx('bad/children-list.yml')]);
    expect(e.pos).toMatchObject({ line: 3, col: 5 });
    expect(e.hint).toContain('rack1:');
  });
  it('unknown key with a suggestion', () => {
    const e = parseFails([fx('bad/typo-key.yml')]);
    expect(e.pos).toMatchObject({ line: 2, col: 3 });
    expect(e.message).toContain('unknown key "host"');
    expect(e.hint).toContain('"hosts"');
  });
  it('bad range', () => {
    const e = parseFails([fx('bad/bad-range.yml')]);
    expect(e.pos).toMatchObject({ line: 3, col: 5 });
    expect(e.message).toContain('start is after end');
  });
  it('a mistake in an INI inventory points at its line', () => {
    const e = parseFails([fx('bad/ini.ini')]);
    expect(e.message).toContain('section [site:children] names group "rack2"');
    expect(e.pos).toMatchObject({ file: fx('bad/ini.ini'), line: 6, col: 1 });
  });
  it('YAML syntax error', () => {
    const e = parseFails([fx('bad/syntax.yml')]);
    expect(e.message).toContain('YAML');
    expect(e.pos?.file).toBe(fx('bad/syntax.yml'));
  });
  it('host vars given as a list', () => {
    const e = parseFails([fx('bad/host-vars-list.yml')]);
    expect(e.pos).toMatchObject({ line: 4, col: 7 });
  });
  it('group cycles', () => {
    expect(parseFails([fx('bad/cycle.yml')]).message).toMatch(/own ancestor/);
  });
  it('missing inventory', () => {
    expect(parseFails([fx('nope.yml')]).message).toContain('not found');
  });
});
