// Playbook, play and task schemas (TypeBox): the loader validates raw YAML against the "loose"
// schemas below (task lists are checked node by node so errors point at the right task), and
// the published schemas/playbook.json is built from the same keyword definitions plus every
// registered module's argument schema, so editors complete module names and their arguments.
import type { Static, TOptional, TProperties, TSchema } from '@sinclair/typebox';
import { Type } from '../schema/type-builder.js';
import type { ModuleDef } from '../module-api/types.js';
import { relaxForTemplates } from '../schema/template-relax.js';

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
/** A condition: an expression with or without braces, a boolean, or a list that must all hold. */
const Cond = (description: string, examples: unknown[]) =>
  Type.Union([Type.String(), Type.Boolean(), Type.Array(Type.Union([Type.String(), Type.Boolean()]))], {
    description,
    examples,
  });
const VarsMap = (description: string) => Type.Record(Type.String(), Type.Unknown(), { description });
const Env = Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.String()], {
  description: 'Environment variables for commands the task runs (a mapping, or a template giving one).',
});

/** Keywords a block, a task and an include share (inherited play -> block -> task). */
export const commonKeywords = {
  name: Str('What this step does; shown in output and used by --start-at-task.', ['Power off the node']),
  when: Cond('Run only if this holds (a template expression, braces optional).', [
    "eq power_state 'On'",
    'bootc_tpm2_luks',
  ]),
  tags: StrList('Tags for --tags / --skip-tags.', [['deploy', 'power']]),
  vars: VarsMap('Variables for this node and what it contains (above play vars, below registered vars).'),
  become: Bool('Run commands with privilege escalation.'),
  become_user: Str('User to become.', ['root']),
  environment: Env,
  no_log: Type.Union([Type.Boolean(), Type.String()], {
    description: "Hide this task's arguments and results from all output (for secrets).",
  }),
  ignore_errors: Type.Union([Type.Boolean(), Type.String()], {
    description: 'A failure does not stop the host; it is counted as ignored.',
  }),
  ignore_unreachable: Bool('An unreachable host does not stop the play for that host.'),
  delegate_to: Str('Run on this host instead (e.g. localhost).', ['localhost']),
  run_once: Bool('Run for the first host of the batch only; the result is shared.'),
  timeout: Type.Integer({
    minimum: 1,
    description: 'Seconds before the task is aborted and fails.',
    examples: [600],
  }),
  any_errors_fatal: Type.Union([Type.Boolean(), Type.String()], {
    description:
      'A failure on any host stops the play for all hosts. A condition (braces optional) is evaluated with the failed host\'s variables.',
    examples: [true, "eq preflight_on_failure 'stop'"],
  }),
  resume: Type.Union([Type.Literal('rerun'), Type.Literal('skip')], {
    description: 'On --resume: `skip` a task that already succeeded (default), or `rerun` it every time.',
  }),
};

export const loopControlSchema = Type.Object(
  opt({
    loop_var: Str('Name of the loop variable (default `item`).', ['node']),
    label: Str('What to show per item instead of the whole item.', ['{{ item.name }}']),
    pause: Type.Number({ minimum: 0, description: 'Seconds to wait between items.' }),
    index_var: Str('Variable holding the 0-based index.', ['idx']),
  }),
  { additionalProperties: false, description: 'How a loop names and shows its items.' },
);

/** Keywords only a task (not a block) has. */
export const taskOnlyKeywords = {
  loop: Type.Union([Type.Array(Type.Unknown()), Type.String()], {
    description: 'Run the task once per item (a list, or a template giving one).',
    examples: [['a', 'b'], '{{ groups.nodes }}'],
  }),
  with_items: Type.Union([Type.Array(Type.Unknown()), Type.String()], {
    description: 'Old spelling of `loop`.',
  }),
  loop_control: loopControlSchema,
  register: Type.String({
    pattern: '^[A-Za-z_][A-Za-z0-9_]*$',
    description: 'Save the result in this variable for later tasks.',
    examples: ['power'],
  }),
  until: Type.Union([Type.String(), Type.Boolean()], {
    description: 'Retry until this holds (see retries, delay).',
    examples: ["eq result.power_state 'Off'"],
  }),
  retries: Type.Integer({ minimum: 0, description: 'Attempts for `until` (default 3).', examples: [10] }),
  delay: Type.Number({
    minimum: 0,
    description: 'Seconds between `until` attempts (default 5).',
    examples: [5],
  }),
  failed_when: Cond('The task failed if this holds (overrides the module).', ['result.rc != 0']),
  changed_when: Cond('The task changed something if this holds (overrides the module).', [false]),
  notify: StrList('Handlers (names or `listen` topics) to run at the end of the play if this task changed.', [
    'reboot node',
  ]),
  args: VarsMap('Module arguments given apart from the module key (merged; the module key wins).'),
};

export const taskKeywordNames = new Set([...Object.keys(commonKeywords), ...Object.keys(taskOnlyKeywords)]);

/** A task without its module key (the loader validates the module's arguments with the module's schema). */
export const taskKeywordsSchema = Type.Object(opt({ ...commonKeywords, ...taskOnlyKeywords }), {
  additionalProperties: false,
});
export type RawTaskKeywords = Static<typeof taskKeywordsSchema>;

export const handlerKeywordsSchema = Type.Object(
  opt({
    ...commonKeywords,
    ...taskOnlyKeywords,
    listen: StrList('Topics this handler also answers to in `notify`.', ['restart services']),
  }),
  { additionalProperties: false },
);

const TaskList = (description: string) => Type.Array(Type.Unknown(), { description });
/** A play section left empty (`tasks:` with nothing after it) is an empty list, as in Ansible. */
const PlayList = (description: string) =>
  Type.Union([Type.Array(Type.Unknown()), Type.Null()], { description });

export const blockSchema = Type.Object(
  {
    ...opt(commonKeywords),
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
  { ...opt(commonKeywords), import_tasks: FileRef },
  { additionalProperties: false },
);
export const includeTasksSchema = Type.Object(
  { ...opt(commonKeywords), include_tasks: FileRef },
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
  { ...opt(commonKeywords), import_role: RoleImport },
  { additionalProperties: false },
);
export const includeRoleSchema = Type.Object(
  { ...opt(commonKeywords), include_role: RoleImport },
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
        when: Cond('Apply the role only if this holds.', ['deploy_bootc']),
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
    hosts: Type.Union([Type.String(), Type.Array(Type.String())], {
      description: 'Host pattern: names, groups, globs, `a:b`, `a:&b`, `a:!b`, `~regex`.',
      examples: ['baremetal', 'nodes:!maintenance'],
    }),
    ...opt({
      name: Str('What this play does.', ['Deploy bootc image']),
      vars: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
        description: 'Play variables.',
      }),
      vars_files: Type.Union([Type.String(), Type.Array(Type.String())], {
        description: 'YAML files of variables, relative to the playbook; later files win.',
        examples: [['vars/images.yml']],
      }),
      gather_facts: Bool(
        'Gather facts first. Default false in tsbm: bare-metal nodes have no facts until the ramdisk is up.',
      ),
      serial: Type.Union(
        [
          Type.Integer({ minimum: 1 }),
          Type.String(),
          Type.Array(Type.Union([Type.Integer(), Type.String()])),
        ],
        {
          description: 'Batch size: a number, a percentage, or a list of them for growing batches.',
          examples: [1, '30%', [1, 5, '100%']],
        },
      ),
      max_fail_percentage: Type.Number({
        minimum: 0,
        maximum: 100,
        description: 'Stop the play when more hosts of a batch fail.',
      }),
      any_errors_fatal: Type.Union([Type.Boolean(), Type.String()], {
        description: 'Any failure stops the play for all hosts; a condition is evaluated with the failed host\'s variables.',
      }),
      strategy: Type.Union([Type.Literal('linear'), Type.Literal('free')], {
        description: '`linear`: hosts move task by task together; `free`: each host goes as fast as it can.',
      }),
      tags: StrList('Tags added to every task of the play.'),
      become: Bool('Privilege escalation for every task.'),
      become_user: Str('User to become.'),
      environment: Env,
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
      when: Cond('Condition added to the imported plays.', ['do_undeploy']),
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
  const task = Type.Object(opt({ ...commonKeywords, ...taskOnlyKeywords, ...moduleProps }), {
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
