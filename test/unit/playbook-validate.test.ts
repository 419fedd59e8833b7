// validatePlaybooks in-process with a hand-made inventory view: which names are in scope where.
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validatePlaybooks } from '../../src/playbook/validate.js';
import { fixtureLookup } from './playbook-fixture-modules.js';

const DIR = relative(process.cwd(), join(import.meta.dirname, '..', 'fixtures', 'playbooks', 'scopes'));

const inventory = {
  select: (p: string) => (p === 'nodes' ? ['n1', 'n2'] : []),
  hosts: () => ['n1', 'n2'],
  vars: (h: string): Record<string, unknown> => (h === 'n1' ? { only_on_one: 1 } : {}),
  magic: (h: string) => ({ inventory_hostname: h, group_names: ['nodes'], groups: { nodes: ['n1', 'n2'] } }),
};

describe('validatePlaybooks variable scopes', () => {
  const errors = validatePlaybooks([join(DIR, 'site.yml')], { ...fixtureLookup, inventory });
  const lines = errors.map((e) => `${relative(DIR, e.pos!.file)}:${e.pos!.line} ${e.message}`);

  it('reports exactly the undefined uses, each once, in reading order', () => {
    expect(lines).toEqual([
      'site.yml:10 undefined variable "block_var" in task "Outside the block" for hosts n1, n2',
      'site.yml:12 undefined variable "item" in task "Loop var outside its loop" for hosts n1, n2',
      'site.yml:14 undefined variable "later" in task "Registered later" for hosts n1, n2',
      'site.yml:21 undefined variable "only_on_one" in task "Only some hosts have it" for host n2',
      'tasks/uses.yml:2 undefined variable "undefined_in_include" in task "In the include" for hosts n1, n2',
    ]);
  });

  it('checks nothing about variables without an inventory', () => {
    expect(validatePlaybooks([join(DIR, 'site.yml')], fixtureLookup)).toEqual([]);
  });

  it('extra vars define names everywhere', () => {
    const extra = { block_var: 1, item: 1, later: 1, only_on_one: 1, undefined_in_include: 1 };
    expect(validatePlaybooks([join(DIR, 'site.yml')], { ...fixtureLookup, inventory, extraVars: extra })).toEqual([]);
  });
});
