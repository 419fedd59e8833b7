// docs/architecture.md's layer table is the one dependency-cruiser enforces: the same layers in
// the same order, each with the same entries of src/, and every entry of src/ in one of them. A
// directory added to the config (or to src/) and not to the table, or the other way round, fails.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** The LAYERS object of .dependency-cruiser.cjs, read as text (the config exports only its rules). */
function configLayers(): [string, string[]][] {
  const text = readFileSync(join(ROOT, '.dependency-cruiser.cjs'), 'utf8');
  const body = /const LAYERS = \{([\s\S]*?)\n\};/.exec(text)?.[1] ?? '';
  return [...body.matchAll(/^\s*(\w+): \[([^\]]*)\]/gm)].map((m) => [m[1]!, [...m[2]!.matchAll(/'([^']+)'/g)].map((x) => x[1]!).sort()]);
}

/** The rows of the doc's table: layer name and the src/ entries named in its second column. */
function docLayers(): [string, string[]][] {
  const text = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const table = text.slice(text.indexOf('| layer | directories of `src/` | holds |'));
  const rows = table.split('\n').slice(2).filter((l) => l.startsWith('| '));
  return rows.map((r) => {
    const [, layer, dirs] = r.split('|').map((c) => c.trim());
    // `modules/CAPABILITY/` names the modules/ directory; other entries are `name/` or `file.ts`.
    const names = [...dirs!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.split('/')[0]!);
    return [layer!, [...new Set(names)].sort()];
  });
}

describe('docs/architecture.md layer table', () => {
  it('matches the layers dependency-cruiser enforces, in order', () => {
    expect(docLayers()).toEqual(configLayers());
  });

  it('puts every entry of src/ in a layer', () => {
    const inLayers = new Set(configLayers().flatMap(([, d]) => d));
    const entries = readdirSync(join(ROOT, 'src')).filter((e) => e.endsWith('.ts') || !e.includes('.'));
    expect(entries.filter((e) => !inLayers.has(e))).toEqual([]);
  });
});
