// The module list (src/modules/registry.ts) holds every module's definition, so the loader,
// the executor and `tsbm modules` need nothing else; and loading it stays cheap: a module file
// imports only what its definition needs, and what run() needs inside run(). Checked on the
// built registry with a resolve hook that logs every file Node loads.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { allModules, getModule } from '../../src/modules/registry.js';

const root = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'tsbm-modlist-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a module file may import besides other module files: the definition's vocabulary. */
const DEFINITION_FILES = [
  'errors.js',
  'module-api/types.js',
  'schema/type-builder.js',
  'modules/lib/file-args.js',
  'redfish/module-args.js',
  'deploy/arg-names.js',
  // tiny pure helpers used by many modules' own functions
  'deploy/disk.js',
  'deploy/ramdisk-exec.js',
  'inventory/node-data.js',
];

function filesLoadedBy(entry: string): string[] {
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function resolve(spec, ctx, next) {
  const r = await next(spec, ctx);
  appendFileSync(process.env.LOAD_LOG, r.url + '\\n');
  return r;
}\n`,
  );
  writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`);
  const log = join(dir, 'load.log');
  writeFileSync(log, '');
  const r = spawnSync(process.execPath, ['--import', join(dir, 'register.mjs'), '-e', `await import(${JSON.stringify(entry)})`, '--input-type=module'], {
    env: { ...process.env, LOAD_LOG: log },
    encoding: 'utf8',
  });
  expect(r.stderr).toBe('');
  return [...new Set(readFileSync(log, 'utf8').split('\n').filter((l) => l.startsWith('file:')))].map((u) => fileURLToPath(u));
}

describe('module list', () => {
  it('has one file per module, named for it, each in the list once', () => {
    const files = readdirSync(join(root, 'src', 'modules'))
      .filter((f) => f.endsWith('.ts') && f !== 'registry.ts')
      .map((f) => f.slice(0, -3))
      .sort();
    expect(allModules().map((m) => m.name)).toEqual(files);
    for (const n of files) expect(getModule(n)?.name).toBe(n);
  });

  it('loads only the definitions: no third-party library, no implementation helper', () => {
    const dist = join(root, 'dist');
    const loaded = filesLoadedBy(join(dist, 'modules', 'registry.js'));
    expect(loaded.filter((f) => f.includes('/node_modules/'))).toEqual([]);
    const others = loaded
      .filter((f) => f.startsWith(dist))
      .map((f) => relative(dist, f))
      .filter((f) => !/^modules\/[a-z_]+\.js$/.test(f) && !DEFINITION_FILES.includes(f));
    expect(others, 'import these inside run() (see src/modules/registry.ts)').toEqual([]);
  });
});
