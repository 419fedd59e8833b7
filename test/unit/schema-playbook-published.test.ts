// The published playbook schema is what editors (yaml-language-server) use: it must compile
// as a JSON Schema, accept a real playbook and know every module's arguments.
import { Ajv } from 'ajv';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { publishedPlaybookSchema } from '../../src/playbook/schema.js';
import { fixtureModules } from './playbook-fixture-modules.js';

const schema = publishedPlaybookSchema(fixtureModules);
const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
const FIX = join(import.meta.dirname, '..', 'fixtures', 'playbooks');

describe('published playbook schema', () => {
  it('offers every module with its argument schema as task properties', () => {
    const task = (schema.$defs as Record<string, { properties: Record<string, unknown> }>).task!;
    const defs = schema.$defs as Record<string, unknown>;
    for (const m of fixtureModules)
      expect(task.properties[m.name], m.name).toEqual({ $ref: `#/$defs/module_${m.name}` });
    expect(JSON.stringify(defs.module_redfish_power)).toContain('"state"');
  });

  it('accepts the full-feature fixture playbook', () => {
    const doc = parse(readFileSync(join(FIX, 'full', 'site.yml'), 'utf8')) as unknown;
    // FQCN spellings are loader aliases, not schema properties: normalise for the editor view.
    const text = JSON.stringify(doc).replaceAll('ansible.builtin.', '');
    expect(validate(JSON.parse(text)), JSON.stringify(validate.errors)).toBe(true);
  });

  it('rejects an unknown module argument and a misspelled keyword', () => {
    expect(validate([{ hosts: 'all', tasks: [{ redfish_power: { state: 'on', colour: 1 } }] }])).toBe(false);
    expect(validate([{ hosts: 'all', tasks: [{ debug: {}, retires: 1 }] }])).toBe(false);
    expect(validate([{ hosts: 'all', tasks: [{ block: [{ debug: {} }], rescue: [{ debug: {} }] }] }])).toBe(
      true,
    );
  });

  it('accepts templates for typed values, as the loader does', () => {
    const task = { redfish_power: { state: '{{ s }}', timeout: '{{ t }}' }, retries: '{{ n }}', until: 'x' };
    expect(validate([{ hosts: 'all', tasks: [task] }]), JSON.stringify(validate.errors)).toBe(true);
    expect(validate([{ hosts: 'all', tasks: [{ redfish_power: { state: 'sideways' } }] }])).toBe(false);
    expect(validate([{ hosts: 'all', tasks: ['{{ not_a_task }}'] }])).toBe(false);
  });
});
