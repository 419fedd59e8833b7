// The module list (src/modules/registry.ts) holds every module's definition, so the loader,
// the executor and `tsbm modules` need nothing else. The build turns it into one file of plain
// definitions (scripts/module-list.mjs), which must say exactly what the source list says; it is
// the one lazy-loading mechanism: start-up loads that file alone, and a task loads its module's
// file (which imports what it needs at the top) the first time it runs, and no other module's
// (checked with a resolve hook that logs every file Node loads).
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

/** The .ts files under src/modules/, relative to it (registry.ts aside). */
function moduleFiles(): string[] {
  return (readdirSync(join(root, 'src', 'modules'), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts') && f !== 'registry.ts');
}

/** The files Node loads for these imports (or for this script, when given). */
function filesLoadedBy(entries: string[], script?: string): string[] {
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
  const r = spawnSync(process.execPath, ['--import', join(dir, 'register.mjs'), '--input-type=module', '-e', script ?? entries.map((e) => `await import(${JSON.stringify(e)});`).join('\n')], {
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

  it('runs a module by loading its own file, and no other module\'s', () => {
    const dist = join(root, 'dist');
    const list = join(dist, 'modules', 'registry.js');
    const loaded = filesLoadedBy([list], `const { getModule } = await import(${JSON.stringify(list)});
await getModule('debug').run({ host: 'h', vars: { x: 1 }, task: 't', log() {} }, { var: 'x' });`);
    const moduleFilesLoaded = loaded.filter((f) => /\/modules\/[a-z-]+\/[a-z_]+\.js$/.test(f)).map((f) => relative(dist, f));
    expect(moduleFilesLoaded).toEqual(['modules/flow/debug.js']);
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
