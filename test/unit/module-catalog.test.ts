// src/modules/catalog.ts is generated (npm run schemas) from the module files: the registry
// answers the loader and the docs from it without importing any module's code. This test fails
// when someone changes a module (or adds one) without regenerating.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { moduleCatalogText } from '../../src/modules/catalog-text.js';
import { allModules, getModule, loadModule, loadModuleDefs, moduleLoaderNames } from '../../src/modules/registry.js';

const FIX = 'src/modules/catalog.ts is stale: run `npm run schemas` and commit the result';

describe('module catalog', () => {
  it('is what the module files define', async () => {
    const onDisk = readFileSync(join(import.meta.dirname, '..', '..', 'src', 'modules', 'catalog.ts'), 'utf8');
    expect(onDisk === moduleCatalogText(await loadModuleDefs()), FIX).toBe(true);
  });

  it('lists exactly the modules the registry can load', () => {
    expect(allModules().map((m) => m.name).sort(), FIX).toEqual(moduleLoaderNames());
  });

  it("runs a module's own code, imported on first use", async () => {
    const debug = getModule('debug')!;
    const real = await loadModule('debug');
    expect(debug).not.toBe(real);
    expect(debug.args).toEqual(JSON.parse(JSON.stringify(real.args)));
    const logged: string[] = [];
    const ctx = { host: 'h', vars: {}, task: 't', log: (m: string) => logged.push(m) } as never;
    expect(await debug.run(ctx, { msg: 'hello' } as never)).toEqual(await real.run(ctx, { msg: 'hello' } as never));
  });
});
