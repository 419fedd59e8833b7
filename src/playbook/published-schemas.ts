// Everything derived from the schema definitions: the JSON Schema files for editors (the build
// writes them to schemas/, which the package ships; `tsbm schemas -o DIR` writes them anywhere)
// and the list of schemas whose validators are compiled ahead of time (schema/precompile.ts).
// scripts/build-artifacts.mjs runs both after tsc.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import { parse } from 'yaml';
import { inventorySchema } from '../inventory/schema.js';
import { allModules } from '../modules/registry.js';
import type { ModuleDef } from '../module-api/types.js';
import { eventSchema } from '../output/event-schema.js';
import type { AjvMode } from '../schema/precompiled.js';
import { argsSchemaJson, loaderSchemaJson } from '../schema/ajv.js';
import * as playbookSchemas from './schema.js';

const BASE = 'https://tsbm.dev/schemas/';

const plain = (v: unknown): Record<string, unknown> =>
  JSON.parse(JSON.stringify(v)) as Record<string, unknown>;

/** The arguments of a module's YAML example, if the example parses (shown as `examples` to editors). */
function exampleArgs(m: ModuleDef): unknown[] {
  try {
    const doc = parse(m.example) as unknown;
    const tasks = Array.isArray(doc) ? doc : [doc];
    for (const t of tasks) {
      if (t && typeof t === 'object' && m.name in t) {
        const args = (t as Record<string, unknown>)[m.name];
        if (args && typeof args === 'object') return [args];
      }
    }
  } catch {
    // An example that is not YAML is still shown by `tsbm modules`; it just is not an example here.
  }
  return [];
}

function moduleSchema(m: ModuleDef): Record<string, unknown> {
  const s = plain(m.args);
  const examples = exampleArgs(m);
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    ...s,
    $id: `${BASE}modules/${m.name}.json`,
    title: `${m.name} arguments`,
    description: [m.summary, m.description].filter(Boolean).join('\n\n'),
    ...(examples.length > 0 ? { examples } : {}),
  };
}

/** File name (relative to the schemas directory) -> JSON Schema, for every module in the list. */
function publishedSchemas(modules: readonly ModuleDef[] = allModules()): Record<string, object> {
  const out: Record<string, object> = {
    'playbook.json': playbookSchemas.publishedPlaybookSchema(modules),
    'inventory.json': {
      $schema: 'http://json-schema.org/draft-07/schema#',
      ...plain(inventorySchema),
      $id: `${BASE}inventory.json`,
    },
    'events.json': {
      $schema: 'http://json-schema.org/draft-07/schema#',
      ...plain(eventSchema),
      $id: `${BASE}events.json`,
    },
  };
  for (const m of modules) out[`modules/${m.name}.json`] = moduleSchema(m);
  return out;
}

/** Writes every published schema under dir (other files there are left alone); returns the file names. */
export function writeSchemas(dir: string): string[] {
  const files = publishedSchemas();
  for (const [name, schema] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), `${JSON.stringify(schema, null, 2)}\n`);
  }
  return Object.keys(files);
}

function isSchema(v: unknown): v is TSchema {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && ('type' in v || 'anyOf' in v);
}

/**
 * Every (mode, JSON schema) pair the loader and the executor compile: every schema exported by
 * playbook/schema.ts (templates allowed), and module arguments three ways: for the loader
 * (templates allowed), and rendered, with and without Ansible-style conversion of "5"/"true".
 */
export function schemasToPrecompile(): Array<{ mode: AjvMode; json: Record<string, unknown> }> {
  const out: Array<{ mode: AjvMode; json: Record<string, unknown> }> = [];
  for (const s of Object.values(playbookSchemas)) if (isSchema(s)) out.push({ mode: 'plain', json: loaderSchemaJson(s) });
  for (const m of allModules()) {
    out.push({ mode: 'plain', json: loaderSchemaJson(m.args) });
    out.push({ mode: 'plain', json: argsSchemaJson(m.args) });
    out.push({ mode: 'coerce', json: argsSchemaJson(m.args) });
  }
  return out;
}
