// TypeBox's JSON Schema builders, the ones tsbm's playbook and module schemas use, without
// loading TypeBox at run time: importing @sinclair/typebox loads ~220 files (~90 ms, more than a
// third of `tsbm run`'s start-up), and building a schema only needs a few plain objects.
// Each function builds exactly what TypeBox 0.34 builds (same keys in the same order, same
// Kind/Optional symbols, so TypeBox's own functions accept the result) and has TypeBox's type,
// so `Static<typeof schema>` works as before. test/unit/schema-type-builder.test.ts compares
// both builders. Schemas that need more of TypeBox (Recursive, Value.Check) import it directly.
import type { JsonTypeBuilder } from '@sinclair/typebox';

const Kind = Symbol.for('TypeBox.Kind');
const OptionalKind = Symbol.for('TypeBox.Optional');
/** TypeBox's pattern for a Record keyed by any string. */
const PATTERN_STRING_EXACT = '^(.*)$';

type Schema = Record<string | symbol, unknown>;
type Options = Record<string, unknown> | undefined;

/** TypeBox's CreateType in its default instance mode: options first, then the schema's own keys. */
const create = (schema: Schema, options?: Options): Schema => (options !== undefined ? { ...options, ...schema } : schema);

const isOptional = (s: unknown): boolean =>
  typeof s === 'object' && s !== null && (s as Schema)[OptionalKind] === 'Optional';

type Used =
  | 'Array'
  | 'Boolean'
  | 'Integer'
  | 'Literal'
  | 'Null'
  | 'Number'
  | 'Object'
  | 'Optional'
  | 'Record'
  | 'String'
  | 'Union'
  | 'Unknown'
  | 'Unsafe';

const builder = {
  Array: (items: Schema, options?: Options) => create({ [Kind]: 'Array', type: 'array', items }, options),
  Boolean: (options?: Options) => create({ [Kind]: 'Boolean', type: 'boolean' }, options),
  Integer: (options?: Options) => create({ [Kind]: 'Integer', type: 'integer' }, options),
  Literal: (value: string | number | boolean, options?: Options) =>
    create({ [Kind]: 'Literal', const: value, type: typeof value }, options),
  Null: (options?: Options) => create({ [Kind]: 'Null', type: 'null' }, options),
  Number: (options?: Options) => create({ [Kind]: 'Number', type: 'number' }, options),
  Object: (properties: Record<string, Schema>, options?: Options) => {
    const required = Object.keys(properties).filter((k) => !isOptional(properties[k]));
    return create(
      required.length > 0
        ? { [Kind]: 'Object', type: 'object', required, properties }
        : { [Kind]: 'Object', type: 'object', properties },
      options,
    );
  },
  Optional: (schema: Schema, enable?: boolean) => {
    if (enable === false) {
      const { [OptionalKind]: _dropped, ...rest } = schema;
      return create(rest);
    }
    return create({ ...schema, [OptionalKind]: 'Optional' });
  },
  Record: (key: Schema, value: Schema, options: Options = {}) => {
    // Only what tsbm uses: Type.Record(Type.String(), V). Anything else needs TypeBox itself.
    if (key[Kind] !== 'String' || key.pattern !== undefined) {
      throw new Error('type-builder: Record supports only a plain Type.String() key; import TypeBox for others');
    }
    return create({ [Kind]: 'Record', type: 'object', patternProperties: { [PATTERN_STRING_EXACT]: value } }, options);
  },
  String: (options?: Options) => create({ [Kind]: 'String', type: 'string' }, options),
  Union: (types: Schema[], options?: Options) =>
    types.length === 0
      ? create({ [Kind]: 'Never', not: {} }, options)
      : types.length === 1
        ? create(types[0]!, options)
        : create({ [Kind]: 'Union', anyOf: types }, options),
  Unknown: (options?: Options) => create({ [Kind]: 'Unknown' }, options),
  Unsafe: (options: Schema = {}) => create({ [Kind]: options[Kind] ?? 'Unsafe' }, options),
};

/** Drop-in for TypeBox's `Type`, limited to the builders above (their TypeBox signatures). */
export const Type = builder as unknown as Pick<JsonTypeBuilder, Used>;
