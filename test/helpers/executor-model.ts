// Hand-built playbook models and a tiny inventory for executor unit tests, plus a runner that
// collects every event.
import { commandModule } from '../../src/modules/commands/command.js';
import { getModule } from '../../src/modules/registry.js';
import type { ModuleDef } from '../../src/module-api/types.js';
import type { EngineDeps, InventoryView, RunHooks } from '../../src/executor/deps.js';
import { executePlaybook } from '../../src/executor/engine.js';
import type { ExecutorTuning, RunOptions } from '../../src/executor/options.js';
import { EventBus, type TsbmEvent } from '../../src/output/events.js';
import { Redactor } from '../../src/output/redact.js';
import type { Block, Handler, IncludeTasks, Play, Playbook, Task, TaskNode } from '../../src/playbook/model.js';
import type { Vars } from '../../src/types.js';
import { type FakeLab, fakeLab } from './fake-connection.js';

const pos = (line = 1) => ({ file: '/pb/site.yml', line, col: 3 });
let seq = 0;

type TaskExtra = Partial<Omit<Task, 'kind' | 'module' | 'args'>>;

export function task(module: string, args: Record<string, unknown> = {}, extra: TaskExtra = {}): Task {
  const line = ++seq;
  return {
    kind: 'task',
    id: `site.yml:${line}:3`,
    module,
    args,
    argsPos: pos(line),
    pos: pos(line),
    keyPos: {},
    when: [],
    tags: [],
    vars: {},
    notify: [],
    baseDir: '/pb',
    ...extra,
  };
}

/** `command` task with a free-form command line. */
export const cmd = (line: string, extra: TaskExtra = {}): Task => task('command', { cmd: line }, { name: line, ...extra });

export const when = (...exprs: string[]) => exprs.map((expr) => ({ expr, pos: pos() }));

export function block(parts: { block: TaskNode[]; rescue?: TaskNode[]; always?: TaskNode[] }, extra: Partial<Block> = {}): Block {
  const line = ++seq;
  return {
    kind: 'block',
    id: `site.yml:${line}:3`,
    pos: pos(line),
    keyPos: {},
    when: [],
    tags: [],
    vars: {},
    baseDir: '/pb',
    rescue: [],
    always: [],
    ...parts,
    ...extra,
  };
}

export function include(file: string, extra: Partial<IncludeTasks> = {}): IncludeTasks {
  const line = ++seq;
  return { kind: 'include_tasks', id: `site.yml:${line}:3`, file, pos: pos(line), keyPos: {}, when: [], tags: [], vars: {}, baseDir: '/pb', ...extra };
}

export function handler(name: string, t: Task, listen: string[] = []): Handler {
  return { ...t, name, listen };
}

export function play(tasks: TaskNode[], extra: Partial<Play> = {}): Play {
  return {
    name: 'test play',
    pos: pos(),
    keyPos: {},
    hosts: 'all',
    vars: {},
    varsFiles: [],
    gatherFacts: false,
    anyErrorsFatal: false,
    strategy: 'linear',
    tags: [],
    preTasks: [],
    roleTasks: [],
    tasks,
    postTasks: [],
    handlers: [],
    roles: [],
    baseDir: '/pb',
    ...extra,
  };
}

export const playbook = (...plays: Play[]): Playbook => ({ file: '/pb/site.yml', dir: '/pb', plays });

export interface FakeInventory {
  hosts: Record<string, Vars>;
  groups?: Record<string, string[]>;
}

export function fakeInventory(inv: FakeInventory): InventoryView {
  const names = Object.keys(inv.hosts);
  const groups = { all: names, ...inv.groups };
  const one = (p: string): string[] => (p in groups ? groups[p as keyof typeof groups]! : names.filter((n) => n === p));
  return {
    names: () => names,
    select: (pattern) => {
      const want = new Set(pattern.split(/[,:]/).flatMap((p) => one(p.trim())));
      return names.filter((n) => want.has(n));
    },
    varsFor: (h) => ({ ...inv.hosts[h] }),
    magicFor: (h) => ({
      inventory_hostname: h,
      group_names: Object.entries(inv.groups ?? {})
        .filter(([, hs]) => hs.includes(h))
        .map(([g]) => g),
      groups,
    }),
    connectionSpec: (h) => ({
      host: h,
      connection: 'ssh',
      address: h,
      port: 22,
      user: 'root',
      hostKeyChecking: 'off',
      connectTimeoutMs: 1000,
    }),
  };
}

export const baseOptions = (o: Partial<RunOptions> = {}): RunOptions => ({
  playbook: '/pb/site.yml',
  inventories: [],
  tags: [],
  skipTags: [],
  extraVars: {},
  forks: 50,
  check: false,
  diff: false,
  listHosts: false,
  listTasks: false,
  listTags: false,
  syntaxCheck: false,
  output: 'plain',
  verbosity: 0,
  ...o,
});

export interface RunResult {
  code: number;
  events: TsbmEvent[];
  lab: FakeLab;
  redactor: Redactor;
  /** host_result events without loop items: `host task status`. */
  results(): string[];
  resultOf(host: string, taskName: string): Extract<TsbmEvent, { type: 'host_result' }> | undefined;
  recap(): Extract<TsbmEvent, { type: 'recap' }>['stats'];
}

const testModules = (extra: ModuleDef[]) => (name: string) =>
  extra.find((m) => m.name === name) ?? (name === 'command' ? (commandModule as unknown as ModuleDef) : getModule(name));

export async function runModel(
  pb: Playbook,
  opts: {
    inventory?: FakeInventory;
    options?: Partial<RunOptions>;
    lab?: FakeLab;
    signal?: AbortSignal;
    tuning?: ExecutorTuning;
    modules?: ModuleDef[];
    loadTaskFile?: EngineDeps['loadTaskFile'];
    onEvent?: (e: TsbmEvent) => void;
    hooks?: RunHooks;
    /** The bus to emit on (a JUnit writer may listen), else a new one. */
    bus?: EventBus;
  } = {},
): Promise<RunResult> {
  const bus = opts.bus ?? new EventBus();
  const events: TsbmEvent[] = [];
  bus.on((e) => {
    events.push(e);
    opts.onEvent?.(e);
  });
  const redactor = new Redactor();
  const lab = opts.lab ?? fakeLab();
  const code = await executePlaybook(
    pb,
    baseOptions(opts.options),
    {
      bus,
      redactor,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.hooks ? { hooks: opts.hooks } : {}),
      connect: lab.factory,
      inventory: fakeInventory(opts.inventory ?? { hosts: { node1: {} } }),
      modules: testModules(opts.modules ?? []),
      loadTaskFile:
        opts.loadTaskFile ??
        (() => {
          throw new Error('no include files in this test');
        }),
    },
    { untilDelayMs: 1, ...opts.tuning },
  );
  const hostResults = () =>
    events.filter((e): e is Extract<TsbmEvent, { type: 'host_result' }> => e.type === 'host_result' && e.item === undefined);
  return {
    code,
    events,
    lab,
    redactor,
    results: () => hostResults().map((e) => `${e.host} ${e.task} ${e.status}`),
    resultOf: (h, t) => hostResults().find((e) => e.host === h && e.task === t),
    recap: () => (events.find((e) => e.type === 'recap') as Extract<TsbmEvent, { type: 'recap' }>).stats,
  };
}
