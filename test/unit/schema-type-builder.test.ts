// src/schema/type-builder.ts stands in for TypeBox's builders at run time: it must build the
// very same objects (keys in the same order, Kind/Optional symbols), or validation, the catalog
// and schemas/ would change. Compared with TypeBox itself, builder by builder and composed.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import * as TypeBox from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { Type as Lite } from '../../src/schema/type-builder.js';

const Real = TypeBox.Type;

/** Own keys (strings and symbols) in order, recursively: what "the same object" means here. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(shape);
  if (v === null || typeof v !== 'object') return v;
  return Reflect.ownKeys(v).map((k) => [String(k), shape((v as Record<string | symbol, unknown>)[k])]);
}

/** Builds the same schemas with either builder. */
function samples(T: typeof Lite): unknown[] {
  const opt = { description: 'd', examples: ['x'] };
  return [
    T.String(),
    T.String({ minLength: 1, pattern: '^a', ...opt }),
    T.Number({ minimum: 0, maximum: 100 }),
    T.Integer({ minimum: 1, default: 443 }),
    T.Boolean(opt),
    T.Null(),
    T.Unknown(opt),
    T.Literal('on'),
    T.Literal(3),
    T.Literal(true, opt),
    T.Array(T.String(), { minItems: 1 }),
    T.Union([]),
    T.Union([T.String()], opt),
    T.Union([T.String()]),
    T.Union([T.Literal('a'), T.Literal('b')], opt),
    T.Optional(T.String()),
    T.Optional(T.Optional(T.String()), false),
    T.Record(T.String(), T.Unknown(), opt),
    T.Record(T.String(), T.Union([T.String(), T.Null()])),
    T.Unsafe({ $ref: '#/$defs/x' }),
    T.Object({}),
    T.Object({ a: T.Optional(T.String()) }),
    T.Object(
      {
        state: T.Union([T.Literal('on'), T.Literal('off')]),
        retries: T.Optional(T.Integer({ minimum: 0 })),
        nested: T.Optional(T.Object({ size: T.Integer() }, { additionalProperties: false })),
        env: T.Record(T.String(), T.String()),
      },
      { additionalProperties: false, description: 'args' },
    ),
  ];
}

describe('type-builder', () => {
  it('builds exactly what TypeBox builds', () => {
    const lite = samples(Lite);
    const real = samples(Real as unknown as typeof Lite);
    expect(lite.length).toBe(real.length);
    for (const [i, s] of lite.entries()) expect(shape(s), `sample ${i}`).toEqual(shape(real[i]));
  });

  it("builds schemas TypeBox's own functions understand", () => {
    const s = Lite.Object({ n: Lite.Integer(), tags: Lite.Optional(Lite.Array(Lite.String())) }, { additionalProperties: false });
    expect(TypeBox.KindGuard.IsObject(s)).toBe(true);
    expect(Value.Check(s, { n: 1, tags: ['a'] })).toBe(true);
    expect(Value.Check(s, { n: 'x' })).toBe(false);
  });

  it('refuses a Record it cannot build like TypeBox', () => {
    expect(() => Lite.Record(Lite.String({ pattern: '^a' }), Lite.String())).toThrow(/Record/);
  });

  it('is what playbook and module schemas are built with (TypeBox is not loaded by a run)', () => {
    // TypeBox itself stays where a run of the generic modules never goes: published-only schemas
    // and what only Redfish and deploy tasks load.
    const allowed = new Set([
      'configdrive/content.ts',
      'configdrive/source.ts',
      'inventory/schema.ts',
      'output/event-schema.ts',
    ]);
    const src = join(import.meta.dirname, '..', '..', 'src');
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.ts')) {
          const text = readFileSync(p, 'utf8');
          const valueImport = /^import\s+(?!type\s)\{?[^;]*?\}?\s*from\s+'@sinclair\/typebox[^']*';/ms;
          const imports = text.match(new RegExp(valueImport.source, 'gms')) ?? [];
          // `import { type A, type B } from ...` imports nothing at run time
          const real = imports.filter((i) => !/^import\s+\{\s*(type\s+\w+\s*,?\s*)+\}/.test(i));
          if (real.length > 0 && !allowed.has(relative(src, p))) offenders.push(relative(src, p));
        }
      }
    };
    walk(src);
    expect(offenders, 'import { Type } from src/schema/type-builder.js instead').toEqual([]);
  });
});
