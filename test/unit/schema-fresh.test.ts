// schemas/ is generated (npm run schemas) from the same definitions the code validates with.
// This test fails when someone changes a schema (or adds a module) without regenerating.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { publishedSchemas, schemaText } from '../../src/playbook/published-schemas.js';

const DIR = join(import.meta.dirname, '..', '..', 'schemas');
/** JSON files under dir, as paths relative to it. */
function listJson(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.json')).sort();
}

const FIX = 'schemas/ is stale: run `npm run schemas` and commit the result';

describe('published schemas', () => {
  const expected = publishedSchemas();

  it('has exactly the files the definitions produce', () => {
    expect(listJson(DIR), FIX).toEqual(Object.keys(expected).sort());
  });

  it.each(Object.keys(expected))('%s matches its definition', (name) => {
    let onDisk = '';
    try {
      onDisk = readFileSync(join(DIR, name), 'utf8');
    } catch {
      // reported by the comparison below
    }
    expect(onDisk === schemaText(expected[name]!), `${name}: ${FIX}`).toBe(true);
  });

  it('includes the playbook, inventory and event schemas and every module', () => {
    expect(Object.keys(expected)).toEqual(
      expect.arrayContaining(['playbook.json', 'inventory.json', 'events.json']),
    );
    for (const [name, s] of Object.entries(expected))
      expect((s as { $id?: string }).$id, name).toMatch(/^https:\/\/tsbm\.dev\/schemas\//);
  });
});
