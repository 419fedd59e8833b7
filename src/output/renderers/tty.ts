// Live renderer for a terminal, on listr2: a tree task -> hosts with spinners, elapsed times,
// "retrying 2/10" and a progress line for long waits, under permanent PLAY headers. The
// executor runs the tasks; this file keeps a model of them from events and drives listr2 Tasks
// (tty-listr.ts) from it. Finished tasks become permanent text; only unfinished ones stay live.
import { painter, STATUS_COLOR } from '../color.js';
import { diffLines } from '../diff-lines.js';
import type { EventBus, HostStatus, TsbmEvent } from '../events.js';
import { compactJson, formatDuration, formatItem, formatProgress, oneLine, problemLine, sanitizeDeep, withoutPayload } from '../format.js';
import { recapLines } from '../recap.js';
import { resumeLines } from '../resume-lines.js';
import { type AttachedRenderer, flushed, type RenderOptions } from '../renderer.js';
import { createListrView, type ListrTask, type ListrView, type TaskState } from './tty-listr.js';

const TICK_MS = 100;
/** Above this many hosts a finished task lists only the hosts that did not go well (unless -v). */
const LIST_ALL_HOSTS_UP_TO = 10;

interface HostView {
  host: string;
  startedAt: number;
  status?: HostStatus; // undefined while running
  worst?: HostStatus; // over a loop's items so far
  itemsDone: number;
  msg?: string;
  item?: unknown;
  durationMs: number;
  retry?: string;
  /** Retries so far in this task (shown live, then once on the finished line). */
  retried?: { count: number; last?: string };
  progress?: string;
  /** -v lines (arguments, results) shown under the host once its task is finished. */
  details: string[];
  lt: ListrTask;
}

interface TaskView {
  taskId: string;
  name: string;
  handler: boolean;
  startedAt: number;
  endedAt: number;
  hosts: Map<string, HostView>;
  lt: ListrTask;
  /** "… N more hosts" under a live task taller than the terminal allows. */
  more?: ListrTask;
  /** Hosts shown for this task in earlier entries (free strategy: it was settled, then more hosts came). */
  earlier: number;
  /** Hosts that had done it in the run this one resumes: left out (the play's resume line counts them). */
  resumed?: number;
}

const WORSE: HostStatus[] = ['skipped', 'ok', 'changed', 'ignored', 'rescued', 'failed', 'unreachable', 'interrupted'];
const worse = (a: HostStatus | undefined, b: HostStatus): HostStatus =>
  a === undefined || WORSE.indexOf(b) > WORSE.indexOf(a) ? b : a;

/** listr2 knows done, failed and skipped; the status word in the title says the rest. */
const STATE: Record<HostStatus, TaskState> = {
  ok: 'ok',
  changed: 'ok',
  rescued: 'ok',
  ignored: 'ok',
  skipped: 'skipped',
  failed: 'failed',
  unreachable: 'failed',
  interrupted: 'failed',
};

export function attach(bus: EventBus, opts: RenderOptions): AttachedRenderer {
  const { stream, verbosity } = opts;
  const now = opts.now ?? Date.now;
  const paint = painter(opts.color !== false);
  const viewReady = createListrView(stream, opts.color !== false);
  let view: ListrView | undefined;
  const tasks: TaskView[] = []; // unfinished (live) tasks, in start order
  let permanent: ListrTask[] = []; // finished tasks and text lines not yet printed
  let shownLive = '';
  /** Hosts of each task already in the permanent output (a task reopened under free strategy says so). */
  const settledHosts = new Map<string, number>();
  let chain: Promise<void> = viewReady.then((v) => {
    view = v;
  });
  let ticker: NodeJS.Timeout | undefined;
  let finished = false;

  const finalStatus = (h: HostView): HostStatus | undefined => h.status ?? h.worst;
  const taskTitle = (t: TaskView) => (t.handler ? `HANDLER ${t.name}` : t.name);

  const runningHostTitle = (h: HostView, t: number): string => {
    const items = h.itemsDone > 0 ? `${h.itemsDone} item${h.itemsDone === 1 ? '' : 's'} done` : '';
    const extra = [items, h.retry].filter(Boolean).join('  ');
    return `${h.host}${formatItem(h.item)}  ${formatDuration(t - h.startedAt)}${extra ? `  ${extra}` : ''}`;
  };

  /**
   * Live titles: elapsed times tick, retries and progress show as they arrive. The live tree
   * is cut to the terminal's height, running hosts first (they are what the operator waits for).
   */
  const refresh = (v: ListrView) => {
    const t = now();
    const tty = stream as NodeJS.WritableStream & { rows?: number };
    let room = Math.max(3, (tty.rows ?? 24) - 2) - tasks.length;
    for (const task of tasks) {
      task.lt.title$ = `${taskTitle(task)}  ${formatDuration(t - task.startedAt)}`;
      for (const h of task.hosts.values()) {
        if (h.status !== undefined) continue;
        h.lt.title$ = runningHostTitle(h, t);
        // sent every tick: listr2 only buffers output for a host line it has drawn once
        if (h.progress !== undefined) h.lt.output$ = h.progress;
      }
      const hosts = [...task.hosts.values()].sort(
        (a, b) => Number(a.status !== undefined) - Number(b.status !== undefined),
      );
      const lines = (h: HostView) => (h.status === undefined && h.progress !== undefined ? 2 : 1);
      const shown: HostView[] = [];
      let used = 0;
      for (const h of hosts) {
        if (used + lines(h) > room - (shown.length < hosts.length - 1 ? 1 : 0)) break;
        shown.push(h);
        used += lines(h);
      }
      const children = shown.map((h) => h.lt);
      if (shown.length < hosts.length) {
        task.more ??= v.text('');
        task.more.title$ = `… ${hosts.length - shown.length} more hosts`;
        children.push(task.more);
        used++;
      }
      room = Math.max(0, room - used);
      const current = task.lt.subtasks ?? [];
      if (current.length !== children.length || current.some((c, i) => c !== children[i]))
        v.setChildren(task.lt, children);
    }
  };

  const settleHost = (v: ListrView, h: HostView, task: TaskView) => {
    const status = finalStatus(h);
    if (status === undefined) {
      // settled without a result (interrupted, or the play ended): say so instead of spinning forever
      h.lt.title$ = `${h.host}${formatItem(h.item)}  unfinished`;
      v.setState(h.lt, 'skipped');
      return;
    }
    const r = h.retried;
    const retried = r ? ` · ${r.count} ${r.count === 1 ? 'retry' : 'retries'}${r.last ? `, last: ${oneLine(r.last)}` : ''}` : '';
    const msg = `${h.msg ? `: ${oneLine(h.msg)}` : ''}${retried}`;
    const duration = h.status === undefined ? task.endedAt - h.startedAt : h.durationMs;
    h.lt.title$ = `${h.host}${formatItem(h.status === undefined ? h.item : undefined)}  ${paint(STATUS_COLOR[status], status)} ${formatDuration(duration)}${msg}`;
    v.setState(h.lt, STATE[status]);
  };

  const summary = (task: TaskView): string => {
    const counts = new Map<HostStatus, number>();
    for (const h of task.hosts.values()) {
      const st = finalStatus(h);
      if (st) counts.set(st, (counts.get(st) ?? 0) + 1);
    }
    return WORSE.filter((s) => counts.has(s))
      .map((s) => `${counts.get(s)} ${s}`)
      .join(', ');
  };

  const settleTask = (v: ListrView, task: TaskView) => {
    if (task.hosts.size === 0 && task.resumed) return; // done before, on every host: the resume line said so
    let worst: HostStatus | undefined;
    for (const h of task.hosts.values()) {
      settleHost(v, h, task);
      for (const d of h.details) v.task(`· ${d}`, h.lt);
      const st = finalStatus(h);
      if (st) worst = worse(worst, st);
    }
    const listAll = verbosity >= 1 || task.hosts.size <= LIST_ALL_HOSTS_UP_TO;
    // a task skipped everywhere is one line: listr2 would list its hosts only if it happened to
    // draw them live first, so never list them rather than sometimes
    const listed = [...task.hosts.values()].filter(
      (h) => worst !== 'skipped' && (listAll || !['ok', 'changed', 'skipped'].includes(finalStatus(h) ?? '')),
    );
    v.setChildren(
      task.lt,
      listed.map((h) => h.lt),
    );
    const earlier = task.earlier ? `; ${task.earlier} more above` : '';
    const counts = task.hosts.size ? `  (${summary(task)}${earlier})` : '';
    task.lt.title$ = `${taskTitle(task)}  ${formatDuration(task.endedAt - task.startedAt)}${counts}`;
    settledHosts.set(task.taskId, task.earlier + task.hosts.size);
    v.setState(task.lt, STATE[worst ?? 'ok']);
    permanent.push(task.lt);
  };

  /** Moves finished tasks (a finished prefix, keeping order) to the permanent output. */
  const settle = (v: ListrView, all: boolean) => {
    while (tasks.length > 0) {
      const first = tasks[0]!;
      const done = first.hosts.size === 0 || [...first.hosts.values()].every((h) => h.status !== undefined);
      if (!all && (!done || tasks.length === 1)) break;
      tasks.shift();
      settleTask(v, first);
    }
  };

  const text = (v: ListrView, ...lines: string[]) => {
    for (const l of lines) permanent.push(v.text(l));
  };

  /** The view of a task, re-opened if it was already settled (free strategy: a slow host arrives late). */
  const taskOf = (
    v: ListrView,
    e: { taskId: string; task: string; time: number },
    handler = false,
  ): TaskView => {
    let task = tasks.find((x) => x.taskId === e.taskId);
    if (!task) {
      const lt = v.task(e.task);
      v.setState(lt, 'running');
      task = {
        taskId: e.taskId,
        name: e.task,
        handler,
        startedAt: e.time,
        endedAt: e.time,
        hosts: new Map(),
        lt,
        earlier: settledHosts.get(e.taskId) ?? 0,
      };
      tasks.push(task);
    }
    return task;
  };

  const hostOf = (
    v: ListrView,
    e: { taskId: string; task: string; host: string },
    time: number,
  ): HostView => {
    const task = taskOf(v, { ...e, time });
    let h = task.hosts.get(e.host);
    if (!h) {
      const lt = v.task(e.host, task.lt);
      v.setState(lt, 'running');
      h = { host: e.host, startedAt: time, durationMs: 0, itemsDone: 0, details: [], lt };
      task.hosts.set(e.host, h);
    }
    return h;
  };

  const handle = (v: ListrView, raw: TsbmEvent): void => {
    const e = sanitizeDeep(verbosity >= 1 ? raw : withoutPayload(raw));
    switch (e.type) {
      case 'run_start':
        if (verbosity >= 1) text(v, `tsbm ${e.version}: run ${e.runId} of ${e.playbook}`);
        break;
      case 'play_start':
        settle(v, true);
        text(v, paint('bold', `PLAY [${e.play}]`));
        break;
      case 'task_start':
        taskOf(v, e, e.handler === true);
        settle(v, false);
        break;
      case 'host_task_start': {
        const h = hostOf(v, e, e.time);
        if (h.status !== undefined) v.setState(h.lt, 'running');
        h.status = undefined;
        h.retry = undefined;
        h.progress = undefined;
        if (h.durationMs === 0) h.startedAt = e.time;
        if (verbosity >= 1 && e.args !== undefined) h.details.push(`args: ${compactJson(e.args)}`);
        break;
      }
      case 'host_result': {
        if (e.resumed === true && verbosity < 2) {
          const task = tasks.find((x) => x.taskId === e.taskId);
          if (task?.hosts.delete(e.host)) task.resumed = (task.resumed ?? 0) + 1;
          break;
        }
        const h = hostOf(v, e, e.time - e.durationMs);
        const task = taskOf(v, e);
        if (e.item !== undefined) {
          // one loop item: the host keeps running until the loop's own result arrives
          h.worst = worse(h.worst, e.status);
          h.itemsDone++;
          h.item = e.item;
          if (e.msg && e.status !== 'ok' && e.status !== 'changed' && e.status !== 'skipped') h.msg = e.msg;
          h.durationMs = e.time - h.startedAt;
        } else {
          h.status = e.status;
          h.msg = e.msg ?? h.msg;
          h.item = undefined;
          h.durationMs = e.durationMs;
        }
        h.retry = undefined;
        h.progress = undefined;
        task.endedAt = Math.max(task.endedAt, e.time);
        if (h.status !== undefined) settleHost(v, h, task);
        if (e.diff) text(v, ...diffLines(e.diff.before, e.diff.after, e.diff.path ?? e.task));
        if (verbosity >= 1 && e.result && Object.keys(e.result).length > 0) {
          h.details.push(`result${formatItem(e.item)}: ${compactJson(e.result)}`);
        }
        settle(v, false);
        break;
      }
      case 'retry': {
        const h = hostOf(v, e, e.time);
        h.retry = `retrying ${e.attempt}/${e.retries}${e.msg ? `: ${oneLine(e.msg, 80)}` : ''}`;
        h.retried = { count: (h.retried?.count ?? 0) + 1, ...(e.msg ? { last: e.msg } : {}) };
        if (verbosity >= 1) text(v, paint('yellow', `  [${e.host}] ${e.task}: ${h.retry}`));
        break;
      }
      case 'progress': {
        const h = hostOf(v, e, e.time);
        h.progress = formatProgress(e, false); // the host line shows elapsed time already
        break;
      }
      case 'log':
        if (e.level <= verbosity) {
          const prefix = `  ${e.host ? `[${e.host}] ` : ''}`;
          text(v, ...e.message.split('\n').map((l) => paint('gray', prefix + l)));
        }
        break;
      case 'warning':
        text(
          v,
          `${paint('magenta', '[WARNING]:')} ${e.host ? `[${e.host}] ` : ''}${e.task ? `${e.task}: ` : ''}${oneLine(e.message)}`,
        );
        break;
      case 'validation_error':
        text(v, problemLine(e));
        break;
      case 'resume':
        text(v, ...resumeLines(e).map((l) => paint('cyan', l)));
        break;
      case 'recap':
        settle(v, true);
        text(v, ...recapLines(e.stats, e.durationMs, paint, e.hosts));
        break;
      case 'run_end':
        settle(v, true);
        finished = true;
        break;
    }
  };

  /** Hands what changed to listr2: permanent text printed, live tree swapped when its tasks change. */
  const sync = async (v: ListrView) => {
    refresh(v);
    const live = finished ? [] : tasks.map((t) => t.lt);
    const key = live.map((t) => t.id).join(',');
    if (permanent.length === 0 && key === shownLive) return;
    const out = permanent;
    permanent = [];
    shownLive = key;
    await v.flush(out, live);
  };

  const onEvent = (e: TsbmEvent): void => {
    if (!ticker && !finished) {
      ticker = setInterval(() => {
        if (view && !finished) refresh(view);
      }, TICK_MS);
      ticker.unref();
    }
    chain = chain.then(async () => {
      if (!view || (finished && e.type !== 'run_end')) return;
      handle(view, e);
      await sync(view);
    });
  };

  const off = bus.on(onEvent);
  return {
    done: async () => {
      off();
      await chain.catch(() => undefined);
      if (ticker) clearInterval(ticker);
      if (view) {
        if (!finished) {
          settle(view, true);
          finished = true;
          await sync(view);
        }
        await view.stop();
      }
      await flushed(stream);
    },
  };
}
