// `npm run schemas`: writes schemas/ from the schema definitions (see published.ts) and
// removes files there that no longer correspond to anything (e.g. a renamed module).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { publishedSchemas, schemaText } from './published.js';

export function writeSchemas(dir: string): string[] {
  const files = publishedSchemas();
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
  // dist/schema/write-schemas.js -> <package>/schemas
  const dir = resolve(dirname(here), '..', '..', 'schemas');
  const names = writeSchemas(dir);
  process.stdout.write(`wrote ${names.length} schemas to ${dir}\n`);
}
