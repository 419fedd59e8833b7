// One host's way through a play, as a generator: it yields the next step (a task, or a
// point where notified handlers run) and is told how the step went. Block/rescue/always,
// include_tasks and failure exits live here, so the linear and free strategies only decide
// *when* each host's next step runs.
import type { Block, IncludeTasks, Play, Task, TaskKeywords, TaskNode } from '../playbook/model.js';
import { failedResult, type Registered, skippedResult } from './result.js';

export interface TaskStep {
  kind: 'task';
  task: Task;
  /** Enclosing blocks / includes, outermost first. */
  chain: TaskKeywords[];
  /** Position in the play's tree; steps run in lexicographic order of paths. */
  path: number[];
  key: string;
  /** A failure here will be rescued by an enclosing block (it counts as rescued, not failed). */
  rescuable: boolean;
  /** The result to record instead of running a module: an include_tasks (included, skipped, or its load error). */
  preset?: Registered;
}

interface FlushStep {
  kind: 'flush';
  path: number[];
  key: string;
}

export type Step = TaskStep | FlushStep;

export interface Outcome {
  /** interrupted: the run stopped the task (Ctrl-C); the host goes no further, not even into always. */
  status: 'ok' | 'failed' | 'unreachable' | 'interrupted';
  /** An action a controller module asked for (meta: flush_handlers, ...). */
  meta?: string;
  /** The task was skipped on this host (a false condition), not run nor done in an earlier run. */
  notRun?: boolean;
}

export type Exit = 'ok' | 'failed' | 'unreachable' | 'interrupted' | 'ended';

export interface WalkEnv {
  play: Play;
  /** Tags, --start-at-task. */
  selected(task: Task, chain: readonly TaskKeywords[]): boolean;
  /** Evaluates the include's `when`, renders its path and loads it. */
  include(node: IncludeTasks, chain: readonly TaskKeywords[]): { nodes: TaskNode[]; file: string } | { skipped: true } | { error: string };
  /** end_host / end_play / interrupt. */
  ended(): boolean;
  /** The walk ended (ended() was true) with steps still ahead of the host (`next`, when known). */
  cut?(next?: TaskNode): void;
  /** force_handlers: a host that failed still runs its notified handlers at its section's end. */
  forceHandlers?: boolean;
}

const keyOf = (path: readonly number[], id: string) => `${path.join('.')}#${id}`;

// Ansible flushes handlers after pre_tasks, after roles + tasks, and after post_tasks.
const SECTION_GROUPS: ReadonlyArray<readonly number[]> = [[0], [1, 2], [3]];

export function* walkPlay(env: WalkEnv): Generator<Step, Exit, Outcome> {
  const p = env.play;
  const sections = [p.preTasks, p.roleTasks, p.tasks, p.postTasks];
  // Whether any section after `s` has tasks: an ended walk then left work undone.
  const moreAfter = (s: number) => sections.slice(s + 1).some((x) => x.length > 0);
  for (const group of SECTION_GROUPS) {
    for (const s of group) {
      const st = yield* walkList(env, sections[s]!, [], [s], false);
      if (st === 'ended' && moreAfter(s)) env.cut?.();
      if (st === 'failed' && env.forceHandlers) {
        // As Ansible's force_handlers: the section's flush runs for the failed host too.
        const path = [group[group.length - 1]!, Number.POSITIVE_INFINITY];
        yield { kind: 'flush', path, key: keyOf(path, 'flush') };
      }
      if (st !== 'ok') return st;
    }
    const last = group[group.length - 1]!;
    const path = [last, Number.POSITIVE_INFINITY];
    const out = yield { kind: 'flush', path, key: keyOf(path, 'flush') };
    if (out.status !== 'ok') return out.status; // a handler failed on this host
    if (env.ended()) {
      if (moreAfter(last)) env.cut?.();
      return 'ended';
    }
  }
  return 'ok';
}

function* walkList(
  env: WalkEnv,
  nodes: readonly TaskNode[],
  chain: TaskKeywords[],
  path: number[],
  rescuable: boolean,
): Generator<Step, Exit, Outcome> {
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i]!;
    if (env.ended()) {
      env.cut?.(node);
      return 'ended';
    }
    const more = i < nodes.length - 1;
    const p = [...path, i];
    if (node.kind === 'task') {
      if (!env.selected(node, chain)) continue;
      const out = yield { kind: 'task', task: node, chain, path: p, key: keyOf(p, node.id), rescuable };
      if (out.status !== 'ok') return out.status;
      if (out.meta === 'flush_handlers') {
        const fp = [...p, Number.POSITIVE_INFINITY];
        const flushed = yield { kind: 'flush', path: fp, key: keyOf(fp, 'flush') };
        if (flushed.status !== 'ok') return flushed.status;
      }
    } else {
      const st = node.kind === 'block' ? yield* walkBlock(env, node, chain, p, rescuable) : yield* walkInclude(env, node, chain, p, rescuable);
      if (st === 'ended' && more) env.cut?.();
      if (st !== 'ok') return st;
    }
  }
  return env.ended() ? 'ended' : 'ok';
}

function* walkBlock(
  env: WalkEnv,
  b: Block,
  chain: TaskKeywords[],
  p: number[],
  rescuable: boolean,
): Generator<Step, Exit, Outcome> {
  const ch = [...chain, b];
  let st = yield* walkList(env, b.block, ch, [...p, 0], rescuable || b.rescue.length > 0);
  if (st === 'failed' && b.rescue.length > 0) st = yield* walkList(env, b.rescue, ch, [...p, 1], rescuable);
  if (st === 'ended' && b.always.length > 0) env.cut?.();
  if (st === 'unreachable' || st === 'interrupted' || st === 'ended') return st;
  const after = yield* walkList(env, b.always, ch, [...p, 2], rescuable);
  return after !== 'ok' ? after : st;
}

// The include itself is a step, as in Ansible: it counts ok ("included: FILE for HOST"), skipped
// when its `when` is false, failed when its file does not load; then its tasks follow.
function* walkInclude(
  env: WalkEnv,
  node: IncludeTasks,
  chain: TaskKeywords[],
  p: number[],
  rescuable: boolean,
): Generator<Step, Exit, Outcome> {
  const r = env.include(node, chain);
  const task: Task = {
    ...node,
    kind: 'task',
    name: node.name ?? (node.includeRole ? 'include_role' : 'include_tasks'), // as ansible-playbook names an unnamed include
    module: 'include_tasks',
    args: node.includeRole ? { name: node.includeRole.name } : { file: node.file },
    argsPos: node.pos,
    notify: [],
  };
  const step = (preset: Registered): TaskStep => ({ kind: 'task', task, chain, path: p, key: keyOf(p, node.id), rescuable, preset });
  if ('error' in r) {
    const out = yield step(failedResult(r.error));
    return out.status;
  }
  // include_role counts nothing itself when it loads its role, as in ansible-playbook.
  if (node.includeRole && !('skipped' in r)) return yield* walkList(env, r.nodes, [...chain, node], p, rescuable);
  if (env.selected(task, chain)) {
    const out = yield step('skipped' in r ? skippedResult('Conditional result was False') : { changed: false, failed: false, msg: `included: ${r.file}` });
    if (out.status !== 'ok') return out.status;
  }
  if ('skipped' in r) return 'ok';
  return yield* walkList(env, r.nodes, [...chain, node], p, rescuable);
}
