// Text for `tsbm modules [NAME]`, derived only from each module's definition and its TypeBox
// argument schema (a JSON Schema), so the docs cannot drift from what is validated.
import type { ModuleDef } from '../module-api/types.js';

type Schema = Record<string, unknown>;

const isSchema = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v);
const show = (v: unknown): string => JSON.stringify(v) ?? String(v);

/** A readable one-line type: `"on" | "off"`, `integer 1..65535`, `list of string`, `map of string to integer`. */
export function typeText(s: unknown, depth = 0): string {
  if (!isSchema(s) || depth > 8) return 'any';
  if ('const' in s) return show(s.const);
  if (Array.isArray(s.enum)) return s.enum.map(show).join(' | ');
  const alts = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined) as unknown[] | undefined;
  if (alts) return [...new Set(alts.map((a) => typeText(a, depth + 1)))].join(' | ');
  if (Array.isArray(s.allOf)) return s.allOf.map((a) => typeText(a, depth + 1)).join(' & ');
  if (typeof s.$ref === 'string') return s.$ref.replace(/^.*\//, '');
  const type = Array.isArray(s.type) ? s.type.join(' | ') : typeof s.type === 'string' ? s.type : undefined;
  switch (type) {
    case 'string': {
      const extra: string[] = [];
      if (typeof s.format === 'string') extra.push(`format ${s.format}`);
      if (typeof s.pattern === 'string') extra.push(`pattern ${s.pattern}`);
      if (typeof s.minLength === 'number' && s.minLength > 0) extra.push(`min length ${s.minLength}`);
      if (typeof s.maxLength === 'number') extra.push(`max length ${s.maxLength}`);
      return extra.length ? `string (${extra.join(', ')})` : 'string';
    }
    case 'integer':
    case 'number': {
      const num = (k: string) => (typeof s[k] === 'number' ? (s[k] as number) : undefined);
      const [min, xmin, max, xmax] = [num('minimum'), num('exclusiveMinimum'), num('maximum'), num('exclusiveMaximum')];
      if (min !== undefined && max !== undefined) return `${type} ${min}..${max}`;
      const bounds = [
        min !== undefined ? `≥ ${min}` : xmin !== undefined ? `> ${xmin}` : undefined,
        max !== undefined ? `≤ ${max}` : xmax !== undefined ? `< ${xmax}` : undefined,
      ].filter(Boolean);
      return bounds.length ? `${type} ${bounds.join(', ')}` : type;
    }
    case 'array': {
      const items = isSchema(s.items) ? typeText(s.items, depth + 1) : 'any';
      return items.includes(' | ') ? `list of (${items})` : `list of ${items}`;
    }
    case 'object': {
      if (isSchema(s.properties) && Object.keys(s.properties).length > 0) return 'object';
      const values = isSchema(s.additionalProperties)
        ? s.additionalProperties
        : isSchema(s.patternProperties)
          ? Object.values(s.patternProperties)[0]
          : undefined;
      return values ? `map of string to ${typeText(values, depth + 1)}` : 'object';
    }
    case undefined:
      return 'any';
    default:
      return type;
  }
}

export interface ArgDoc {
  path: string;
  type: string;
  required: boolean;
  default?: unknown;
  description?: string;
  examples?: unknown[];
}

/** Object-typed variants of a property (plain, or inside anyOf/oneOf), whose fields get their own lines. */
function objectVariants(s: Schema): Schema[] {
  if (isSchema(s.properties)) return [s];
  const alts = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : []) as unknown[];
  return alts.filter((a): a is Schema => isSchema(a) && isSchema(a.properties));
}

/** Every argument, nested objects flattened to dotted paths (`wait.timeout`), in schema order. */
export function argDocs(schema: unknown, prefix = '', depth = 0): ArgDoc[] {
  if (!isSchema(schema) || depth > 6) return [];
  const out: ArgDoc[] = [];
  for (const variant of objectVariants(schema)) {
    const props = variant.properties as Record<string, unknown>;
    const required = new Set(Array.isArray(variant.required) ? (variant.required as string[]) : []);
    for (const [name, prop] of Object.entries(props)) {
      if (!isSchema(prop)) continue;
      const path = prefix + name;
      const doc: ArgDoc = { path, type: typeText(prop), required: required.has(name) };
      if ('default' in prop) doc.default = prop.default;
      if (typeof prop.description === 'string') doc.description = prop.description;
      if (Array.isArray(prop.examples)) doc.examples = prop.examples;
      out.push(doc);
      out.push(...argDocs(prop.type === 'array' && isSchema(prop.items) ? prop.items : prop, `${path}${prop.type === 'array' ? '[]' : ''}.`, depth + 1));
    }
  }
  return out;
}

/** Word-wraps a paragraph to `width` columns with a hanging indent. */
function wrap(text: string, width: number, indent: string): string[] {
  const lines: string[] = [];
  for (const para of text.split(/\n\s*\n/)) {
    let line = '';
    for (const word of para.split(/\s+/).filter(Boolean)) {
      if (line && indent.length + line.length + 1 + word.length > width) {
        lines.push(indent + line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    if (line) lines.push(indent + line);
  }
  return lines;
}

/** `tsbm modules`: one line per module. */
export function moduleListText(defs: readonly ModuleDef[]): string {
  if (defs.length === 0) return 'No modules are registered.\n';
  const w = Math.max(...defs.map((d) => d.name.length));
  const lines = defs.map((d) => `${d.name.padEnd(w)}  ${d.runsOn.padEnd(10)}  ${d.summary}`);
  return `${'MODULE'.padEnd(w)}  ${'RUNS ON'.padEnd(10)}  SUMMARY\n${lines.join('\n')}\n\nDetails: tsbm modules NAME\n`;
}

/** `tsbm modules NAME`: summary, description, every argument and the example. */
export function moduleDocText(def: ModuleDef, width = 100): string {
  const out = [
    `${def.name} - ${def.summary}`,
    '',
    `Runs on: ${def.runsOn === 'controller' ? 'the controller' : 'the target host (over its connection)'}`,
    `Check mode: ${def.checkMode ? 'supported' : 'not supported (skipped under --check)'}`,
  ];
  if (def.freeForm) out.push(`Free form: \`${def.name}: TEXT\` sets ${def.freeForm}`);
  if (def.description) out.push('', ...wrap(def.description, width, ''));
  const args = argDocs(def.args);
  out.push('', 'ARGUMENTS');
  if (args.length === 0) out.push('  (none)');
  for (const a of args) {
    const flags = [a.required ? 'required' : undefined, 'default' in a ? `default: ${show(a.default)}` : undefined]
      .filter(Boolean)
      .join(', ');
    out.push(`  ${a.path}: ${a.type}${flags ? `  [${flags}]` : ''}`);
    if (a.description) out.push(...wrap(a.description, width, '      '));
    if (a.examples?.length) out.push(`      e.g. ${a.examples.map(show).join(', ')}`);
  }
  out.push('', 'EXAMPLE', ...def.example.replace(/\s+$/, '').split('\n').map((l) => (l.trim() ? `  ${l}` : '')), '');
  return out.join('\n');
}
