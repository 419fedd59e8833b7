// Every playbook keyword, declared once: its YAML type, where it may be written (play, block,
// task, handler; task-level includes and role imports take the block's), whether its value is
// templated per host at run time, how a task inherits it, and how the loader turns the YAML
// value into the model's. The loader's schemas (schema.ts), the model's types (model.ts), the
// parser (task.ts, play.ts) and the executor's inheritance (executor/keywords.ts) all come
// from this table, as ansible-core declares each keyword once with its type and inheritance.
// Adding a keyword: one entry here, then use it where it takes effect.
import type { Static, TSchema } from '@sinclair/typebox';
import { parseError } from '../errors.js';
import type { PathSeg, YamlSource } from '../schema/yaml-source.js';
import { Type } from '../schema/type-builder.js';
import type { Vars } from '../types.js';
import type { Expr } from './expr.js';
import { isMapping, isTemplated, toExprs, toNumber, toStringList } from './values.js';

export type Place = 'play' | 'block' | 'task' | 'handler';

/**
 * How a task gets a keyword: `innermost` - the nearest of task, enclosing blocks (inner to
 * outer) and play that sets it wins; `accumulate` - every level adds to it (conditions, tags,
 * environments); `own` - only the node that says it.
 */
export type Inherit = 'innermost' | 'accumulate' | 'own';

/** Where the loader is in the YAML, for converting a value (positions for errors). */
export interface At {
  src: YamlSource;
  path: PathSeg[];
  /** How the node is named in messages: `task "Install"`. */
  what: string;
}

export interface KeywordDef<S extends TSchema = TSchema, M = Static<S>> {
  schema: S;
  where: readonly Place[];
  /** The node is invalid without it (a play's hosts). */
  required?: boolean;
  /** Rendered per host at run time (`{{ }}`); false: must be a literal (it shapes loading or scheduling). */
  templated: boolean;
  inherit: Inherit;
  /** The model's field for it: the key in camelCase unless given; false: not kept (e.g. `args`, merged into the module's). */
  field?: string | false;
  /** What a task gets when no level sets an `innermost` keyword (the executor's view, executor/keywords.ts). */
  unset?: NoInfer<M>;
  /** The YAML value (already valid for `schema`) as the model holds it; default: as is. */
  toModel?(raw: Static<S>, at: At): M;
}

const Str = (description: string, examples?: unknown[]) =>
  Type.String({ description, ...(examples ? { examples } : {}) });
const StrList = (description: string, examples?: unknown[]) =>
  Type.Union([Type.String(), Type.Array(Type.String())], { description, ...(examples ? { examples } : {}) });
const Bool = (description: string) => Type.Boolean({ description });
/** A condition: an expression with or without braces, a boolean, or a list that must all hold. */
const Cond = (description: string, examples: unknown[]) =>
  Type.Union([Type.String(), Type.Boolean(), Type.Array(Type.Union([Type.String(), Type.Boolean()]))], {
    description,
    examples,
  });
const VarsMap = (description: string) => Type.Record(Type.String(), Type.Unknown(), { description });

/** A table entry, keeping its field name's literal type (for the model's field types). */
const def = <
  S extends TSchema,
  M = Static<S>,
  const F extends string | false = never,
  const I extends Inherit = Inherit,
  const U = never,
>(
  d: KeywordDef<S, M> & { field?: F; inherit: I; unset?: U & NoInfer<M> },
): KeywordDef<S, M> & { field?: F; inherit: I; unset?: U } => d;
const exprs = (raw: unknown, at: At): Expr[] => toExprs(raw, at.src, at.path);
const list = (raw: unknown): string[] => toStringList(raw);
const number = (raw: unknown, at: At): number => toNumber(raw, at.src, at.path, at.what) as number;

const ALL: readonly Place[] = ['play', 'block', 'task', 'handler'];
const NODES: readonly Place[] = ['block', 'task', 'handler'];
const TASKS: readonly Place[] = ['task', 'handler'];

interface LoopControl {
  loopVar: string; // default 'item'
  label?: string;
  pause?: number; // seconds
  indexVar?: string;
}

const loopControlSchema = Type.Object(
  {
    loop_var: Type.Optional(Str('Name of the loop variable (default `item`).', ['node'])),
    label: Type.Optional(Str('What to show per item instead of the whole item.', ['{{ item.name }}'])),
    pause: Type.Optional(Type.Number({ minimum: 0, description: 'Seconds to wait between items.' })),
    index_var: Type.Optional(Str('Variable holding the 0-based index.', ['idx'])),
  },
  { additionalProperties: false, description: 'How a loop names and shows its items.' },
);

function loopControl(raw: Static<typeof loopControlSchema>): LoopControl {
  const lc: LoopControl = { loopVar: raw.loop_var ?? 'item' };
  if (raw.label !== undefined) lc.label = raw.label;
  if (raw.pause !== undefined) lc.pause = raw.pause;
  if (raw.index_var !== undefined) lc.indexVar = raw.index_var;
  return lc;
}

/** The keywords, in the order the schemas list them. */
export const KEYWORDS = {
  hosts: def({
    schema: Type.Union([Type.String(), Type.Array(Type.String())], {
      description: 'Host pattern: names, groups, globs, `a:b`, `a:&b`, `a:!b`, `~regex`.',
      examples: ['baremetal', 'nodes:!maintenance'],
    }),
    where: ['play'],
    required: true,
    templated: false,
    inherit: 'own',
    toModel: (raw): string => (Array.isArray(raw) ? raw.map(String).join(':') : String(raw)),
  }),
  name: def({
    schema: Str('What this step does; shown in output and used by --start-at-task.', ['Power off the node']),
    where: ALL,
    templated: true,
    inherit: 'own',
  }),
  when: def({
    schema: Cond('Run only if this holds (a template expression, braces optional).', ["eq power_state 'On'", 'bootc_tpm2_luks']),
    where: NODES,
    templated: true,
    inherit: 'accumulate',
    toModel: exprs,
  }),
  tags: def({
    schema: StrList('Tags for --tags / --skip-tags (on a play: added to every task of the play).', [['deploy', 'power']]),
    where: ALL,
    templated: false,
    inherit: 'accumulate',
    toModel: list,
  }),
  vars: def({
    schema: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
      description: 'Variables for this node and what it contains (play vars are the lowest of these; block and task vars are above play vars, below registered vars).',
    }),
    where: ALL,
    templated: true,
    inherit: 'accumulate',
    toModel: (raw): Vars => (isMapping(raw) ? raw : {}),
  }),
  vars_files: def({
    schema: Type.Union([Type.String(), Type.Array(Type.String())], {
      description: 'YAML files of variables, relative to the playbook; later files win.',
      examples: [['vars/images.yml']],
    }),
    where: ['play'],
    templated: true,
    inherit: 'own',
    // loaded by the play parser (play.ts), which reads the files
    field: false,
  }),
  gather_facts: def({
    schema: Bool('Gather facts first. Default false in tsbm: bare-metal nodes have no facts until the ramdisk is up.'),
    where: ['play'],
    templated: false,
    inherit: 'own',
  }),
  serial: def({
    schema: Type.Union([Type.Integer({ minimum: 1 }), Type.String(), Type.Array(Type.Union([Type.Integer(), Type.String()]))], {
      description: 'Batch size: a number, a percentage, or a list of them for growing batches.',
      examples: [1, '30%', [1, 5, '100%']],
    }),
    where: ['play'],
    templated: false,
    inherit: 'own',
    toModel: (raw): Array<number | string> => (Array.isArray(raw) ? raw : [raw]).map((x) => (typeof x === 'number' ? x : String(x))),
  }),
  max_fail_percentage: def({
    schema: Type.Number({ minimum: 0, maximum: 100, description: 'Stop the play when more hosts of a batch fail.' }),
    where: ['play'],
    templated: false,
    inherit: 'own',
    toModel: number,
  }),
  strategy: def({
    schema: Type.Union([Type.Literal('linear'), Type.Literal('free')], {
      description: '`linear`: hosts move task by task together; `free`: each host goes as fast as it can.',
    }),
    where: ['play'],
    templated: false,
    inherit: 'own',
  }),
  provision: def({
    schema: Type.Union([Type.Literal('deploy'), Type.Literal('undeploy')], {
      description:
        "tsbm: what the play does to each node's provision state (its node record, `tsbm nodes`). deploy: a node that is active (or protected) is refused unless the run asks for a rebuild (--rebuild, or rebuild: true), it is deploying from its first step that changes it, then active, or deploy failed; undeploy: a protected node is refused, it is undeploying, then available. Nodes that do not finish end safe (powered off, media ejected) unless on_deploy_failure: leave.",
    }),
    where: ['play'],
    templated: false,
    inherit: 'own',
  }),
  become: def({ schema: Bool('Run commands with privilege escalation.'), where: ALL, templated: false, inherit: 'innermost',
    unset: false }),
  become_user: def({ schema: Str('User to become.', ['root']), where: ALL, templated: false, inherit: 'innermost' }),
  environment: def({
    schema: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.String()], {
      description: 'Environment variables for commands the task runs (a mapping, or a template giving one).',
    }),
    where: ALL,
    templated: true,
    inherit: 'accumulate',
  }),
  no_log: def({
    schema: Type.Union([Type.Boolean(), Type.String()], {
      description: "Hide this task's arguments and results from all output (for secrets).",
    }),
    where: NODES,
    templated: true,
    inherit: 'innermost',
    unset: false,
  }),
  ignore_errors: def({
    schema: Type.Union([Type.Boolean(), Type.String()], {
      description: 'A failure does not stop the host; it is counted as ignored.',
    }),
    where: NODES,
    templated: true,
    inherit: 'innermost',
    unset: false,
  }),
  ignore_unreachable: def({
    schema: Bool('An unreachable host does not stop the play for that host.'),
    where: NODES,
    templated: false,
    inherit: 'innermost',
    unset: false,
  }),
  delegate_to: def({
    schema: Str('Run on this host instead (e.g. localhost).', ['localhost']),
    where: NODES,
    templated: true,
    inherit: 'innermost',
  }),
  run_once: def({
    schema: Bool('Run for the first host of the batch only; the result is shared.'),
    where: NODES,
    templated: false,
    inherit: 'innermost',
    unset: false,
  }),
  timeout: def({
    schema: Type.Integer({ minimum: 1, description: 'Seconds before the task is aborted and fails.', examples: [600] }),
    where: NODES,
    templated: false,
    inherit: 'innermost',
    toModel: number,
  }),
  any_errors_fatal: def({
    schema: Type.Union([Type.Boolean(), Type.String()], {
      description:
        "A failure on any host stops the play for all hosts. A condition (braces optional) is evaluated with the failed host's variables.",
      examples: [true, "eq preflight_on_failure 'stop'"],
    }),
    where: ALL,
    templated: true,
    inherit: 'innermost',
    unset: false,
  }),
  check_mode: def({
    schema: Type.Union([Type.Boolean(), Type.String()], {
      description:
        'true: only report what would change, even without --check; false: run for real, even under --check (a condition is evaluated per host).',
    }),
    where: ALL,
    templated: true,
    inherit: 'innermost',
  }),
  force_handlers: def({
    schema: Bool('Run notified handlers on a host even after it failed (as --force-handlers does for every play).'),
    where: ['play'],
    templated: false,
    inherit: 'own',
  }),
  resume: def({
    schema: Type.Union([Type.Literal('rerun'), Type.Literal('skip')], {
      description: 'On --resume: `skip` a task that already succeeded (default), or `rerun` it every time.',
    }),
    where: NODES,
    templated: false,
    inherit: 'innermost',
  }),
  loop: def({
    schema: Type.Union([Type.Array(Type.Unknown()), Type.String()], {
      description: 'Run the task once per item (a list, or a template giving one).',
      examples: [['a', 'b'], '{{ groups.nodes }}'],
    }),
    where: TASKS,
    templated: true,
    inherit: 'own',
    toModel: (raw): unknown => raw,
  }),
  with_items: def({
    schema: Type.Union([Type.Array(Type.Unknown()), Type.String()], { description: 'Old spelling of `loop`.' }),
    where: TASKS,
    templated: true,
    inherit: 'own',
    field: 'loop',
    toModel: (raw): unknown => raw,
  }),
  loop_control: def({ schema: loopControlSchema, where: TASKS, templated: false, inherit: 'own', toModel: loopControl }),
  register: def({
    schema: Type.String({
      pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
      description: 'Save the result in this variable for later tasks.',
      examples: ['power'],
    }),
    where: TASKS,
    templated: false,
    inherit: 'own',
  }),
  until: def({
    schema: Type.Union([Type.String(), Type.Boolean()], {
      description: 'Retry until this holds (see retries, delay).',
      examples: ["eq result.power_state 'Off'"],
    }),
    where: TASKS,
    templated: true,
    inherit: 'own',
    toModel: (raw, at): Expr => exprs(raw, at)[0]!,
  }),
  retries: def({
    schema: Type.Integer({ minimum: 0, description: 'Attempts for `until` (default 3).', examples: [10] }),
    where: TASKS,
    templated: false,
    inherit: 'own',
    toModel: number,
  }),
  delay: def({
    schema: Type.Number({ minimum: 0, description: 'Seconds between `until` attempts (default 5).', examples: [5] }),
    where: TASKS,
    templated: false,
    inherit: 'own',
    toModel: number,
  }),
  failed_when: def({
    schema: Cond('The task failed if this holds (overrides the module).', ['result.rc != 0']),
    where: TASKS,
    templated: true,
    inherit: 'own',
    toModel: exprs,
  }),
  changed_when: def({
    schema: Cond('The task changed something if this holds (overrides the module).', [false]),
    where: TASKS,
    templated: true,
    inherit: 'own',
    toModel: exprs,
  }),
  notify: def({
    schema: StrList('Handlers (names or `listen` topics) to run at the end of the play if this task changed.', ['reboot node']),
    where: TASKS,
    templated: false,
    inherit: 'own',
    toModel: list,
  }),
  args: def({
    schema: VarsMap('Module arguments given apart from the module key (merged; the module key wins).'),
    where: TASKS,
    templated: true,
    inherit: 'own',
    field: false,
  }),
  listen: def({
    schema: StrList('Topics this handler also answers to in `notify`.', ['restart services']),
    where: ['handler'],
    templated: false,
    inherit: 'own',
    toModel: list,
  }),
};

export type KeywordName = keyof typeof KEYWORDS;
type Defs = typeof KEYWORDS;

/** `become_user` -> `becomeUser`. */
type Camel<S extends string> = S extends `${infer A}_${infer B}` ? `${A}${Capitalize<Camel<B>>}` : S;
type FieldOf<K extends KeywordName> = Defs[K] extends { field?: infer F }
  ? [Exclude<F, undefined>] extends [never]
    ? Camel<K>
    : Exclude<F, undefined>
  : Camel<K>;
type ModelOf<D> = D extends KeywordDef<TSchema, infer M> ? M : never;
type At_<K extends KeywordName, P extends Place> = P extends Defs[K]['where'][number] ? K : never;

type KeysBy<I extends Inherit> = { [K in KeywordName]: Defs[K]['inherit'] extends I ? K : never }[KeywordName];
type HasUnset<K extends KeywordName> = Defs[K] extends { unset?: infer U }
  ? [Exclude<U, undefined>] extends [never]
    ? never
    : K
  : never;

/**
 * The `innermost` keywords as a task sees them (fields of the block place): those with an
 * `unset` value are always there, the others only when some level sets them.
 */
export type InnermostFields = {
  [K in KeysBy<'innermost'> as HasUnset<K> extends never ? never : Camel<K>]-?: ModelOf<Defs[K]>;
} & {
  [K in KeysBy<'innermost'> as HasUnset<K> extends never ? Camel<K> : never]?: ModelOf<Defs[K]>;
};

/** The model's fields for the keywords allowed at place P, each optional (set when written). */
export type KeywordFields<P extends Place> = {
  [K in KeywordName as FieldOf<K> extends string ? (At_<K, P> extends never ? never : FieldOf<K>) : never]?: ModelOf<Defs[K]>;
};

const camel = (k: string): string => k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** The model field a keyword is kept in (undefined: not kept). */
export function fieldOf(name: KeywordName): string | undefined {
  const d: KeywordDef = KEYWORDS[name];
  return d.field === false ? undefined : (d.field ?? camel(name));
}

/** The keywords allowed at a place, in table order. */
export function keywordsAt(place: Place): KeywordName[] {
  return (Object.keys(KEYWORDS) as KeywordName[]).filter((k) => (KEYWORDS[k].where as readonly Place[]).includes(place));
}

/** The schemas (optional properties) of the keywords allowed at a place, for building an object schema. */
export function keywordSchemas(place: Place, except: readonly KeywordName[] = []): Record<string, TSchema> {
  const out: Record<string, TSchema> = {};
  for (const k of keywordsAt(place)) {
    if (except.includes(k)) continue;
    const d: KeywordDef = KEYWORDS[k];
    out[k] = d.required ? d.schema : Type.Optional(d.schema);
  }
  return out;
}

/** Whether a schema accepts arbitrary text (a template in it is then just text, taken as written). */
function takesText(s: TSchema): boolean {
  const j = s as { type?: unknown; const?: unknown; anyOf?: TSchema[] };
  return (j.type === 'string' && j.const === undefined) || (j.anyOf ?? []).some(takesText);
}

/**
 * The model fields of the keywords at `place` that `raw` (already schema-valid) sets: the
 * parser's one conversion loop. Keys not given are left out, so inheritance can see "unset".
 * A template where a keyword needs a literal boolean, number or choice is an error here (the
 * loader's schemas let templates through everywhere, for the keywords that render them).
 */
export function keywordValues<P extends Place>(
  place: P,
  raw: Record<string, unknown>,
  at: At,
  except: readonly KeywordName[] = [],
): KeywordFields<P> {
  const out: Record<string, unknown> = {};
  for (const k of keywordsAt(place)) {
    if (except.includes(k)) continue;
    const v = raw[k];
    const field = fieldOf(k);
    // First wins: `loop` over its old spelling `with_items`.
    if (v === undefined || v === null || field === undefined || field in out) continue;
    const d: KeywordDef = KEYWORDS[k];
    // (numbers say so in their own words: toNumber)
    if (!d.templated && !d.toModel && isTemplated(v) && !takesText(d.schema)) {
      throw parseError(
        `"${k}" takes a literal value in ${at.what}; templates are not supported here`,
        at.src.pos([...at.path, k]),
        'write the value itself',
      );
    }
    out[field] = d.toModel ? d.toModel(v, { ...at, path: [...at.path, k] }) : v;
  }
  return out as KeywordFields<P>;
}

/** Keywords of a kind of inheritance that a task may get from enclosing blocks (and the play, where allowed there). */
export function inherited(kind: Inherit): KeywordName[] {
  return keywordsAt('task').filter((k) => KEYWORDS[k].inherit === kind && fieldOf(k) !== undefined);
}
