// Playbook, play and task schemas (TypeBox): the loader validates raw YAML against the "loose"
// schemas below (task lists are checked node by node so errors point at the right task), and
// the published schemas/playbook.json is built from the same keyword definitions plus every
// registered module's argument schema, so editors complete module names and their arguments.
import type { Static, TOptional, TProperties, TSchema } from '@sinclair/typebox';
import { Type } from '../schema/type-builder.js';
import type { ModuleDef } from '../module-api/types.js';
import { relaxForTemplates } from '../schema/template-relax.js';
import { KEYWORDS, keywordSchemas, keywordsAt } from './keywords.js';

/** Every keyword is optional; the few required ones are wrapped back with `req`. */
function opt<T extends TProperties>(props: T): { [K in keyof T]: TOptional<T[K]> } {
  const out: Record<string, TSchema> = {};
  for (const [k, v] of Object.entries(props)) out[k] = Type.Optional(v);
  return out as { [K in keyof T]: TOptional<T[K]> };
}

const Str = (description: string, examples?: unknown[]) =>
  Type.String({ description, ...(examples ? { examples } : {}) });
const StrList = (description: string, examples?: unknown[]) =>
  Type.Union([Type.String(), Type.Array(Type.String())], { description, ...(examples ? { examples } : {}) });
const Bool = (description: string) => Type.Boolean({ description });
const VarsMap = (description: string) => Type.Record(Type.String(), Type.Unknown(), { description });

/** Keywords a block, a task and an include share (inherited play -> block -> task). */
const blockKeywords = keywordSchemas('block');

/** The keys a task may have besides its module key. */
export const taskKeywordNames = new Set<string>(keywordsAt('task'));

/** A task without its module key (the loader validates the module's arguments with the module's schema). */
export const taskKeywordsSchema = Type.Object(keywordSchemas('task'), { additionalProperties: false });

export const handlerKeywordsSchema = Type.Object(keywordSchemas('handler'), { additionalProperties: false });

const TaskList = (description: string) => Type.Array(Type.Unknown(), { description });
/** A play section left empty (`tasks:` with nothing after it) is an empty list, as in Ansible. */
const PlayList = (description: string) =>
  Type.Union([Type.Array(Type.Unknown()), Type.Null()], { description });

export const blockSchema = Type.Object(
  {
    ...blockKeywords,
    block: TaskList('Tasks run in order.'),
    ...opt({
      rescue: TaskList('Run if a task in `block` failed; that failure counts as rescued, not failed.'),
      always: TaskList('Run after `block` (and `rescue`) whatever happened.'),
    }),
  },
  { additionalProperties: false },
);
export type RawBlock = Static<typeof blockSchema>;

const FileRef = Type.Union(
  [Type.String(), Type.Object({ file: Type.String() }, { additionalProperties: false })],
  {
    description: 'Task file, relative to the including file.',
    examples: ['tasks/power.yml'],
  },
);
export const importTasksSchema = Type.Object(
  { ...blockKeywords, import_tasks: FileRef },
  { additionalProperties: false },
);
export const includeTasksSchema = Type.Object(
  { ...blockKeywords, include_tasks: FileRef },
  { additionalProperties: false },
);

const RoleImport = Type.Object(
  {
    name: Str('Role name or path.', ['deploy']),
    ...opt({
      tasks_from: Str("File under the role's tasks/ to run instead of main.yml.", ['power']),
      vars: VarsMap('Role parameters.'),
    }),
  },
  { additionalProperties: false, description: 'A role run here, inlined when the playbook loads.' },
);
export const importRoleSchema = Type.Object(
  { ...blockKeywords, import_role: RoleImport },
  { additionalProperties: false },
);
export const includeRoleSchema = Type.Object(
  { ...blockKeywords, include_role: RoleImport },
  { additionalProperties: false },
);

export const roleRefSchema = Type.Union(
  [
    Type.String(),
    Type.Object(
      opt({
        role: Str('Role name or path.', ['bootc']),
        name: Str('Same as `role`.'),
        vars: VarsMap('Role parameters.'),
        tags: StrList('Tags added to every task of the role.'),
        when: KEYWORDS.when.schema,
        become: Bool('Privilege escalation for the role.'),
        delegate_to: Str('Run the role on this host.'),
      }),
      { additionalProperties: false },
    ),
  ],
  { description: 'A role by name (looked up in roles/ beside the playbook) or with parameters.' },
);

export const playSchema = Type.Object(
  {
    ...keywordSchemas('play'),
    ...opt({
      pre_tasks: PlayList('Tasks before roles.'),
      roles: Type.Union([Type.Array(roleRefSchema), Type.Null()], {
        description: 'Roles, run after pre_tasks and before tasks.',
      }),
      tasks: PlayList('Tasks.'),
      post_tasks: PlayList('Tasks after tasks.'),
      handlers: PlayList('Tasks run at the end of the play when notified.'),
    }),
  },
  { additionalProperties: false },
);
export type RawPlay = Static<typeof playSchema>;

export const importPlaybookSchema = Type.Object(
  {
    import_playbook: Str('Another playbook, inlined here.', ['undeploy.yml']),
    ...opt({
      name: Str('Shown in output.'),
      vars: VarsMap('Variables for the imported plays.'),
      tags: StrList('Tags added to the imported plays.'),
      when: KEYWORDS.when.schema,
    }),
  },
  { additionalProperties: false },
);

/** Ansible FQCN spellings of keywords and generic modules, mapped to tsbm's short names. */
export function shortName(key: string): string {
  const m = /^ansible\.(?:builtin|legacy)\.(.+)$/.exec(key);
  return m ? m[1]! : key;
}

function moduleArgsSchema(m: ModuleDef): TSchema {
  const args = JSON.parse(JSON.stringify(m.args)) as TSchema;
  delete (args as { $id?: string }).$id;
  const desc = `${m.summary}\n\nExample:\n${m.example}`;
  if (m.freeForm) {
    return Type.Union([args, Type.String({ description: `Free form: the ${m.freeForm} argument.` })], {
      description: desc,
    });
  }
  return Type.Union([args, Type.Null()], { description: desc });
}

/** The published playbook schema (JSON, for editors): tasks know every registered module and its arguments. */
export function publishedPlaybookSchema(modules: readonly ModuleDef[]): Record<string, unknown> {
  const ref = (name: string) => ({ $ref: `#/$defs/${name}` });
  // Each module's arguments are defined once and referenced from tasks and handlers.
  const moduleProps: Record<string, TSchema> = {};
  const moduleDefs: Record<string, TSchema> = {};
  for (const m of modules) {
    moduleDefs[`module_${m.name}`] = moduleArgsSchema(m);
    moduleProps[m.name] = Type.Unsafe(ref(`module_${m.name}`));
  }
  const taskList = { type: 'array', items: ref('taskNode') };
  const withLists = (schema: TSchema, lists: string[]) => {
    const s = JSON.parse(JSON.stringify(schema)) as { properties: Record<string, unknown> };
    for (const l of lists) {
      const old = s.properties[l] as { description?: string; anyOf?: unknown[] } | undefined;
      if (!old) continue;
      // Play sections may be left empty (null); block lists may not.
      s.properties[l] = old.anyOf
        ? { description: old.description, anyOf: [taskList, { type: 'null' }] }
        : { ...old, ...taskList };
    }
    return s;
  };
  const task = Type.Object({ ...keywordSchemas('task'), ...opt(moduleProps) }, {
    additionalProperties: false,
    description: 'A task: keywords plus exactly one module key with its arguments.',
  });
  const handler = Type.Object(
    { ...handlerKeywordsSchema.properties, ...opt(moduleProps) },
    {
      additionalProperties: false,
      description: 'A handler: a task run at the end of the play when notified.',
    },
  );
  const play = withLists(playSchema, ['pre_tasks', 'tasks', 'post_tasks']);
  (play.properties as Record<string, unknown>).handlers = {
    description: 'Tasks run at the end of the play when notified.',
    anyOf: [{ type: 'array', items: ref('handler') }, { type: 'null' }],
  };
  // Editors should accept what tsbm accepts: a template string wherever a typed value goes.
  // The result is plain JSON (no TypeBox symbols), exactly what schemas/playbook.json holds.
  const published = relaxForTemplates({
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://tsbm.dev/schemas/playbook.json',
    title: 'tsbm playbook',
    description:
      'A list of plays (or import_playbook entries). Ansible-shaped; see `tsbm modules` for module arguments.',
    type: 'array',
    items: { anyOf: [ref('play'), ref('importPlaybook')] },
    $defs: {
      play,
      importPlaybook: importPlaybookSchema,
      taskNode: {
        anyOf: [
          ref('task'),
          ref('block'),
          ref('importTasks'),
          ref('includeTasks'),
          ref('importRole'),
          ref('includeRole'),
        ],
      },
      task,
      handler,
      block: withLists(blockSchema, ['block', 'rescue', 'always']),
      importTasks: importTasksSchema,
      includeTasks: includeTasksSchema,
      importRole: importRoleSchema,
      includeRole: includeRoleSchema,
      ...moduleDefs,
    },
  });
  return JSON.parse(JSON.stringify(published)) as Record<string, unknown>;
}
