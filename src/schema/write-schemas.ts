// `npm run schemas`: writes schemas/ from the schema definitions (see published.ts) and
// removes files there that no longer correspond to anything (e.g. a renamed module).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { moduleCatalogText } from '../modules/catalog-text.js';
import { loadModuleDefs } from '../modules/registry.js';
import type { ModuleDef } from '../modules/types.js';
import { publishedSchemas, schemaText } from './published.js';

export function writeSchemas(dir: string, modules?: readonly ModuleDef[]): string[] {
  const files = publishedSchemas(modules);
  const written: string[] = [];
  for (const [name, schema] of Object.entries(files)) {
    const path = join(dir, name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, schemaText(schema));
    written.push(name);
  }
  for (const old of listJson(dir)) if (!(old in files)) rmSync(join(dir, old));
  return written;
}

/** JSON files under dir, as paths relative to it. */
export function listJson(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let entries: import('node:fs').Dirent[];
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

const here = fileURLToPath(import.meta.url);
if (process.argv[1] && resolve(process.argv[1]) === here) {
  // dist/schema/write-schemas.js -> <package>/schemas and <package>/src/modules/catalog.ts, both
  // from the module files themselves (the catalog compiled into dist/ may be the stale one; the
  // npm script builds again afterwards).
  const root = resolve(dirname(here), '..', '..');
  const modules = await loadModuleDefs();
  const catalog = join(root, 'src', 'modules', 'catalog.ts');
  const text = moduleCatalogText(modules);
  if (readFileSync(catalog, 'utf8') !== text) writeFileSync(catalog, text);
  const dir = join(root, 'schemas');
  const names = writeSchemas(dir, modules);
  process.stdout.write(`wrote ${names.length} schemas to ${dir}\n`);
}
