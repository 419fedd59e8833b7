// Validators compiled at build time (dist/validators/) must behave exactly like the ones ajv
// compiles at run time: the loader's messages are built from ajv's error objects, so the same
// errors (keyword, paths, params, schema, parentSchema) must come out for any input.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAjv } from '../../src/schema/ajv.js';
import { schemasToPrecompile } from '../../src/playbook/published-schemas.js';
import { precompileInto } from '../../src/schema/precompile.js';
import { precompiled, validatorKey, validatorScript } from '../../src/schema/precompiled.js';

let dir = '';
const items = schemasToPrecompile();

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-validators-'));
  precompileInto(dir, items);
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Inputs shaped like what the loader sees: mappings with the schema's own keys and junk values. */
function inputsFor(json: Record<string, unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys((json.properties as object | undefined) ?? {});
  const value = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom('{{ x }}', '5', 'true', 'on', '', '-1', '1.5'),
    fc.array(fc.string(), { maxLength: 3 }),
  );
  const key = keys.length > 0 ? fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 6 })) : fc.string();
  return fc.oneof(fc.dictionary(key, value, { maxKeys: 5 }), value);
}

describe('build-time validators', () => {
  it('cover every loader schema and every module argument schema, in both modes', () => {
    expect(items.length).toBeGreaterThan(50);
    for (const { mode, json } of items) expect(precompiled(mode, json, dir), validatorKey(mode, json)).toBeTypeOf('function');
  });

  it("come with V8's compiled code, which this Node accepts", () => {
    for (const { mode, json } of items.slice(0, 10)) {
      const file = join(dir, `${validatorKey(mode, json)}.cjs`);
      const script = validatorScript(file, readFileSync(file, 'utf8'));
      expect(script.cachedDataRejected, file).toBe(false);
    }
  });

  it('miss (and so are compiled at run time) for a schema that changed', () => {
    const { mode, json } = items[0]!;
    expect(precompiled(mode, { ...json, description: 'edited' }, dir)).toBeUndefined();
  });

  it('give the same verdict, errors and coerced data as run-time compiled validators', () => {
    const runtime = { plain: newAjv('plain'), coerce: newAjv('coerce') };
    for (const { mode, json } of items) {
      const built = precompiled(mode, json, dir)!;
      const live = runtime[mode].compile(structuredClone(json));
      fc.assert(
        fc.property(inputsFor(json), (input) => {
          const a = structuredClone(input);
          const b = structuredClone(input);
          expect(built(a)).toBe(live(b));
          expect(built.errors ?? null).toEqual(live.errors ?? null);
          expect(a).toEqual(b);
        }),
        { numRuns: 60, seed: 7 },
      );
    }
  }, 60_000);
});
