// `npm run schemas`: writes schemas/ and src/modules/catalog.ts from the module files, and
// removes files in schemas/ that no longer correspond to anything (e.g. a renamed module).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { moduleCatalogText } from '../dist/modules/catalog-text.js';
import { loadModuleDefs } from '../dist/modules/registry.js';
import { publishedSchemas, schemaText } from '../dist/playbook/published-schemas.js';

const root = join(import.meta.dirname, '..');

function listJson(dir) {
  const out = [];
  const walk = (d) => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.json')) out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

// The module files themselves (the catalog compiled into dist/ may be the stale one; the npm
// script builds again afterwards).
const modules = await loadModuleDefs();
const catalog = join(root, 'src', 'modules', 'catalog.ts');
const text = moduleCatalogText(modules);
if (readFileSync(catalog, 'utf8') !== text) writeFileSync(catalog, text);
const dir = join(root, 'schemas');
const files = publishedSchemas(modules);
for (const [name, schema] of Object.entries(files)) {
  mkdirSync(dirname(join(dir, name)), { recursive: true });
  writeFileSync(join(dir, name), schemaText(schema));
}
for (const old of listJson(dir)) if (!(old in files)) rmSync(join(dir, old));
process.stdout.write(`wrote ${Object.keys(files).length} schemas to ${dir}\n`);
