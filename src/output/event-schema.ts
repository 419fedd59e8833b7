// The one definition of tsbm's event stream: the TypeScript type (events.ts derives TsbmEvent
// from it) and the published JSON Schema for `--output json` (schemas/events.json) both come
// from here, so they cannot drift apart.
import { type TSchema, Type } from '@sinclair/typebox';

const SourcePosSchema = Type.Object(
  {
    file: Type.String(),
    line: Type.Integer({ minimum: 1, description: '1-based line' }),
    col: Type.Integer({ minimum: 1, description: '1-based column' }),
  },
  { description: 'Where in a playbook or inventory file the node was defined' },
);

export const hostStatusSchema = Type.Union(
  [
    Type.Literal('ok'),
    Type.Literal('changed'),
    Type.Literal('failed'),
    Type.Literal('unreachable'),
    Type.Literal('skipped'),
    Type.Literal('rescued'),
    Type.Literal('ignored'),
    Type.Literal('interrupted'),
  ],
  {
    description:
      'Outcome of one task on one host (rescued: it failed and an enclosing block rescues it; ignored: it failed or was unreachable under ignore_errors / ignore_unreachable; interrupted: Ctrl-C or SIGTERM stopped it before it finished, so the host is unfinished)',
  },
);

/** How a host ended the run: the one outcome every output reports (src/output/host-outcome.ts). */
const hostOutcomeSchema = Type.Union([Type.Literal('ok'), Type.Literal('failed'), Type.Literal('unreachable'), Type.Literal('unfinished')], {
  description:
    'ok: it got to the end of the playbook; failed / unreachable: a failure of its own (one no rescue or ignore_errors took back) ended it; unfinished: the run stopped before it got to the end (interrupted, a stopped run, a node lock refused)',
});

/** Ironic's provision states tsbm keeps (src/nodes/types.ts), plus `unknown`. */
const provisionStateSchema = Type.Union(
  (['available', 'deploying', 'active', 'deploy failed', 'undeploying', 'unknown'] as const).map((s) => Type.Literal(s)),
  { description: "The node's recorded provision state (`tsbm nodes show`)" },
);

const nodeEndSchema = Type.Object(
  {
    state: provisionStateSchema,
    power: Type.Optional(Type.Union([Type.Literal('On'), Type.Literal('Off'), Type.Literal('unknown')], { description: 'PowerState as last read back from the BMC in this run' })),
    media: Type.Optional(Type.Union([Type.Literal('inserted'), Type.Literal('ejected'), Type.Literal('unknown')], { description: 'Virtual media as last read back from the BMC in this run' })),
    image: Type.Optional(Type.String({ description: 'The image the record says the node runs (or was being given)' })),
    since: Type.Optional(Type.Number({ description: 'active: since when (epoch milliseconds)' })),
    error: Type.Optional(Type.String({ description: 'deploy failed / unknown: why' })),
    protected: Type.Optional(Type.Boolean()),
  },
  { description: "The node's record as this run left it" },
);

export const hostEndSchema = Type.Object(
  {
    outcome: hostOutcomeSchema,
    reason: Type.Optional(Type.String({ description: 'Why it did not end ok: the failure (task: message), or what stopped it' })),
    node: Type.Optional(nodeEndSchema),
  },
  { description: 'How one host ended the run' },
);

const count = Type.Integer({ minimum: 0 });
export const hostStatsSchema = Type.Object(
  { ok: count, changed: count, unreachable: count, failed: count, skipped: count, rescued: count, ignored: count },
  { description: 'Per-host counters shown in the recap' },
);

const time = Type.Number({ description: 'When the event happened (epoch milliseconds)' });

/** An event object: `type` literal first, then `time`, then the event's own fields. */
function event<T extends string, P extends Record<string, TSchema>>(type: T, description: string, props: P) {
  return Type.Object({ type: Type.Literal(type), time, ...props }, { description });
}

const hostTask = {
  host: Type.String({ description: 'Inventory host name' }),
  task: Type.String({ description: 'Task name as shown to the operator' }),
  taskId: Type.String({ description: 'Stable id of the task within the run' }),
};

const runStartEvent = event('run_start', 'The run begins', {
  runId: Type.String(),
  playbook: Type.String({ description: 'Playbook path as given' }),
  version: Type.String({ description: 'tsbm version' }),
  options: Type.Record(Type.String(), Type.Unknown(), {
    description: 'Run options; extra vars by name only (`extraVars`: a list of names), never their values',
  }),
});

const playStartEvent = event('play_start', 'A play begins', {
  play: Type.String(),
  hosts: Type.Array(Type.String(), { description: 'Hosts the play targets after --limit' }),
  pos: Type.Optional(SourcePosSchema),
  strategy: Type.Optional(
    Type.Union([Type.Literal('linear'), Type.Literal('free')], {
      description: 'free: each host at its own pace, so results of different tasks interleave',
    }),
  ),
});

const taskStartEvent = event('task_start', 'A task begins (on all hosts of the batch)', {
  play: Type.String(),
  task: Type.String(),
  taskId: Type.String(),
  module: Type.String(),
  pos: Type.Optional(SourcePosSchema),
  handler: Type.Optional(Type.Boolean({ description: 'True when the task is a handler' })),
  rescue: Type.Optional(
    Type.Boolean({
      description: "True when the task is in a block's rescue section: it runs because a task of the block failed (cleanup)",
    }),
  ),
});

const hostTaskStartEvent = event('host_task_start', 'A task begins on one host', {
  ...hostTask,
  args: Type.Optional(Type.Unknown({ description: 'Module arguments after templating (secrets masked)' })),
});

const hostResultEvent = event('host_result', 'A task finished on one host (once per loop item)', {
  ...hostTask,
  status: hostStatusSchema,
  changed: Type.Boolean(),
  msg: Type.Optional(Type.String()),
  item: Type.Optional(Type.Unknown({ description: 'Loop item (or its loop_control label)' })),
  result: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Module result' })),
  diff: Type.Optional(
    Type.Object(
      { before: Type.String(), after: Type.String(), path: Type.Optional(Type.String()) },
      { description: 'Change made or, with --check, proposed (with --diff)' },
    ),
  ),
  durationMs: Type.Number({ minimum: 0 }),
  counts: Type.Optional(
    Type.Partial(hostStatsSchema, {
      description:
        "What this result added to the host's recap counters (absent on loop items: a loop counts once, by its task's result; empty for results that count nothing, such as meta)",
    }),
  ),
  vars: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description: 'Host variables the task set (register, set_fact, facts), recorded so --resume can restore them',
    }),
  ),
  resumed: Type.Optional(
    Type.Boolean({ description: 'Skipped because the run this one resumes had done it (resume_skip says how many, once per play)' }),
  ),
});

const retryEvent = event('retry', 'An until/retries attempt failed and the task will run again', {
  ...hostTask,
  attempt: Type.Integer({ minimum: 1, description: 'The attempt about to start' }),
  retries: Type.Integer({ minimum: 0, description: 'Total attempts allowed' }),
  msg: Type.Optional(Type.String()),
});

const progressEvent = event('progress', 'Progress of a long wait or transfer', {
  ...hostTask,
  message: Type.String(),
  current: Type.Optional(Type.Number()),
  total: Type.Optional(Type.Number()),
  unit: Type.Optional(Type.String({ description: 'Unit of current/total, e.g. bytes' })),
  elapsedMs: Type.Optional(Type.Number({ minimum: 0 })),
});

const logEvent = event('log', 'Verbose detail: 1 = module arguments, 2 = commands, 3 = stdout/stderr', {
  host: Type.Optional(Type.String()),
  task: Type.Optional(Type.String()),
  level: Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3)]),
  message: Type.String(),
});

const warningEvent = event('warning', 'Something the operator should know about', {
  host: Type.Optional(Type.String()),
  task: Type.Optional(Type.String()),
  message: Type.String(),
});

const validationErrorEvent = event(
  'validation_error',
  'A problem found before the first task (the checks of `tsbm validate`): the run does not start, exit 4',
  {
    message: Type.String({ description: 'What is wrong (the position is in pos)' }),
    hint: Type.Optional(Type.String({ description: 'What to do about it' })),
    pos: Type.Optional(SourcePosSchema),
    hosts: Type.Optional(
      Type.Array(Type.String(), { description: 'Hosts it concerns, when it depends on the host (undefined variables)' }),
    ),
  },
);

const resumeEvent = event('resume', "What a resumed run takes over from the run it continues, once per play (renderers print it as one line)", {
  play: Type.String(),
  from: Type.String({ description: 'The run this one resumes' }),
  done: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
    description: 'Per host, the tasks of this play it had finished there: skipped now (their results carry resumed: true)',
  }),
  restart: Type.Optional(
    Type.Array(Type.String(), {
      description: 'Hosts run again from the start of the play: they failed (--retry-failed) or were ended safe after an interrupt, so nothing they had done counts',
    }),
  ),
  failed: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: 'Hosts that failed in the resumed run and stay failed (not run; --retry-failed runs them again), with their failure',
    }),
  ),
});

const recapEvent = event('recap', 'Per-host counters and outcomes at the end of the run', {
  stats: Type.Record(Type.String(), hostStatsSchema),
  hosts: Type.Optional(
    Type.Record(Type.String(), hostEndSchema, {
      description: 'How each host ended, and its node as the run left it (absent in journals of older versions)',
    }),
  ),
  durationMs: Type.Number({ minimum: 0, description: 'Wall time of the run' }),
});

const runEndEvent = event('run_end', 'The run ended', {
  exitCode: Type.Integer({ description: 'Process exit code, as ansible-playbook (docs/executor.md, "Interrupting and exit codes")' }),
  durationMs: Type.Number({ minimum: 0 }),
  unfinished: Type.Optional(
    Type.Array(Type.String(), {
      description: 'Hosts the run stopped before they reached the end of the playbook (interrupt, a stopped run, max_fail_percentage), failed ones aside',
    }),
  ),
});

export const eventSchema = Type.Union(
  [
    runStartEvent,
    playStartEvent,
    taskStartEvent,
    hostTaskStartEvent,
    hostResultEvent,
    retryEvent,
    progressEvent,
    logEvent,
    warningEvent,
    validationErrorEvent,
    resumeEvent,
    recapEvent,
    runEndEvent,
  ],
  {
    $id: 'https://tsbm.dev/schemas/events.json',
    title: 'tsbm event',
    description: 'One line of `tsbm run --output json` (JSON Lines): one event per line, discriminated by `type`.',
  },
);
