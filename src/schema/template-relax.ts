// Many argument values may be templates (`retries: "{{ n }}"`, `state: "{{ desired }}"`): their
// type is only known after rendering. Validation therefore accepts a string containing `{{`
// wherever the schema constrains a value beyond "any string". Done once, generically, on the
// JSON Schema, so no module has to think about it.

type JsonSchema = Record<string, unknown>;

export const TEMPLATE_STRING: JsonSchema = { type: 'string', pattern: '\\{\\{' };

const CHILD_MAPS = ['properties', 'patternProperties', '$defs', 'definitions'] as const;
const CHILD_ONE = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains'] as const;
const CHILD_LIST = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;

/** True when a schema accepts every string as it is (nothing to relax). */
function acceptsAnyString(s: JsonSchema): boolean {
  const keys = Object.keys(s).filter(
    (k) => !['description', 'examples', 'default', 'title', '$id', '$comment'].includes(k),
  );
  if (keys.length === 0) return true;
  return keys.length === 1 && s.type === 'string';
}

/** A deep copy of `schema` in which every constrained node also accepts a template string. */
export function relaxForTemplates(schema: unknown, top = true): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const src = schema as JsonSchema;
  const out: JsonSchema = { ...src };
  for (const k of CHILD_MAPS) {
    const m = src[k];
    if (m && typeof m === 'object') {
      // A definition keeps its own shape like the root does; what is inside it gets relaxed.
      const defs = k === '$defs' || k === 'definitions';
      out[k] = Object.fromEntries(Object.entries(m).map(([n, v]) => [n, relaxForTemplates(v, defs)]));
    }
  }
  for (const k of CHILD_ONE)
    if (src[k] && typeof src[k] === 'object') out[k] = relaxForTemplates(src[k], false);
  for (const k of CHILD_LIST) {
    const l = src[k];
    if (Array.isArray(l)) out[k] = l.map((v) => relaxForTemplates(v, false));
  }
  // The root keeps its own shape: a whole task or module argument map is never one template.
  // A $ref keeps its shape too: what it points to is relaxed where it is defined.
  if (top || acceptsAnyString(src) || '$ref' in src) return out;
  // Annotations move to the wrapper so editors still show them on hover.
  const meta: JsonSchema = {};
  for (const k of ['description', 'title', 'examples', 'default', '$id'])
    if (out[k] !== undefined) meta[k] = out[k];
  const inner: JsonSchema = { ...out };
  delete inner.$id;
  return { ...meta, anyOf: [inner, TEMPLATE_STRING] };
}
