// The module list (src/modules/registry.ts) holds every module's definition, so the loader,
// the executor and `tsbm modules` need nothing else; and loading it stays cheap: a module file
// imports only what its definition needs, and what run() needs inside run() (checked on the
// built module files with a resolve hook that logs every file Node loads). The build turns the
// list into one file (scripts/module-list.mjs) that must say exactly what the source list says.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
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
  'modules/files/file-args.js',
  'redfish/module-args.js',
  'module-api/arg-names.js',
  // tiny pure helpers used by many modules' own functions
  'module-api/disk.js',
  'module-api/ramdisk-exec.js',
  'inventory/node-data.js',
];

/** The .ts files under src/modules/, relative to it (registry.ts aside). */
function moduleFiles(): string[] {
  return (readdirSync(join(root, 'src', 'modules'), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts') && f !== 'registry.ts');
}

function filesLoadedBy(entries: string[]): string[] {
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
  const r = spawnSync(process.execPath, ['--import', join(dir, 'register.mjs'), '--input-type=module', '-e', entries.map((e) => `await import(${JSON.stringify(e)});`).join('\n')], {
    env: { ...process.env, LOAD_LOG: log },
    encoding: 'utf8',
  });
  expect(r.stderr).toBe('');
  return [...new Set(readFileSync(log, 'utf8').split('\n').filter((l) => l.startsWith('file:')))].map((u) => fileURLToPath(u));
}

describe('module list', () => {
  it('has one file per module, named for it, in a capability folder, each in the list once', () => {
    const defining = moduleFiles().filter((f) => readFileSync(join(root, 'src', 'modules', f), 'utf8').includes('defineModule('));
    expect(defining.map((f) => basename(f, '.ts')).sort()).toEqual(allModules().map((m) => m.name));
    for (const f of defining) expect(f, 'a module lives in src/modules/CAPABILITY/').toMatch(/^[a-z-]+\/[a-z_]+\.ts$/);
    for (const m of allModules()) expect(getModule(m.name)?.name).toBe(m.name);
  });

  it('loads only the definitions: no third-party library, no implementation helper', () => {
    const dist = join(root, 'dist');
    const modules = moduleFiles().filter((f) => allModules().some((m) => f.endsWith(`/${m.name}.ts`)));
    const loaded = filesLoadedBy(modules.map((f) => join(dist, 'modules', f.replace(/\.ts$/, '.js'))));
    expect(loaded.length).toBeGreaterThan(allModules().length);
    expect(loaded.filter((f) => f.includes('/node_modules/'))).toEqual([]);
    const others = loaded
      .filter((f) => f.startsWith(dist))
      .map((f) => relative(dist, f))
      .filter((f) => !/^modules\/[a-z-]+\/[a-z_]+\.js$/.test(f) && !DEFINITION_FILES.includes(f));
    expect(others, 'import these inside run() (see src/modules/registry.ts)').toEqual([]);
  });

  it('is built into one file saying what the source list says, whose run() is the module file\'s', async () => {
    const built = (await import(join(root, 'dist', 'modules', 'registry.js'))) as typeof import('../../src/modules/registry.js');
    const plain = (m: object) => JSON.parse(JSON.stringify({ ...m, run: undefined }));
    expect(built.allModules().map(plain)).toEqual(allModules().map(plain));
    expect(filesLoadedBy([join(root, 'dist', 'modules', 'registry.js')]).filter((f) => f.startsWith(join(root, 'dist')))).toEqual([
      join(root, 'dist', 'modules', 'registry.js'),
    ]);
    const logged: string[] = [];
    const ctx = { host: 'h', vars: { x: { y: 1 } }, task: 't', log: (m: string) => logged.push(m) } as never;
    expect(await built.getModule('debug')!.run(ctx, { var: 'x.y' } as never)).toEqual(await getModule('debug')!.run(ctx, { var: 'x.y' } as never));
    expect(await built.getModule('debug')!.run(ctx, { var: 'x.y' } as never)).toMatchObject({ 'x.y': 1 });
  });
});
