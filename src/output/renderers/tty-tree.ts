// The TTY renderer's tree: live tasks with their host lines, and the finished ones waiting to be
// printed for good. It keeps the listr2 Tasks (tty-listr.ts) in step with the model
// (tty-model.ts); tty-events.ts says what each event changes.
import type { Paint } from '../color.js';
import type { HostStatus } from '../events.js';
import { fitHosts } from './tty-fit.js';
import type { ListrTask, ListrView } from './tty-listr.js';
import { finalStatus, type HostView, STATE, type TaskView, worse } from './tty-model.js';
import { liveTaskTitle, runningHostTitle, settledHostTitle, settledTaskTitle, unfinishedHostTitle } from './tty-titles.js';

/** Above this many hosts a finished task lists only the hosts that did not go well (unless -v). */
const LIST_ALL_HOSTS_UP_TO = 10;

export class TtyTree {
  /** Unfinished (live) tasks, in start order. */
  readonly tasks: TaskView[] = [];
  /** Finished tasks and text lines not yet printed. */
  private permanent: ListrTask[] = [];
  /** Hosts of each task already in the permanent output (a task reopened under free strategy says so). */
  private readonly settledHosts = new Map<string, number>();
  /** Tasks in a rescue section (task_start says so once; a task reopened later keeps it). */
  private readonly cleanup = new Set<string>();

  constructor(
    readonly v: ListrView,
    private readonly verbosity: number,
    readonly paint: Paint,
  ) {}

  /** Lines printed for good above the live tree. */
  text(...lines: string[]): void {
    for (const l of lines) this.permanent.push(this.v.text(l));
  }

  /** What is ready to print for good, handed over once. */
  takePermanent(): ListrTask[] {
    const out = this.permanent;
    this.permanent = [];
    return out;
  }

  /** The view of a task, re-opened if it was already settled (free strategy: a slow host arrives late). */
  taskOf(e: { taskId: string; task: string; time: number; rescue?: boolean }, handler = false): TaskView {
    if (e.rescue) this.cleanup.add(e.taskId);
    let task = this.tasks.find((x) => x.taskId === e.taskId);
    if (!task) {
      const lt = this.v.task(e.task);
      this.v.setState(lt, 'running');
      task = {
        taskId: e.taskId,
        name: e.task,
        handler,
        cleanup: this.cleanup.has(e.taskId),
        startedAt: e.time,
        endedAt: e.time,
        hosts: new Map(),
        lt,
        earlier: this.settledHosts.get(e.taskId) ?? 0,
      };
      this.tasks.push(task);
    }
    return task;
  }

  hostOf(e: { taskId: string; task: string; host: string }, time: number): HostView {
    const task = this.taskOf({ ...e, time });
    let h = task.hosts.get(e.host);
    if (!h) {
      const lt = this.v.task(e.host, task.lt);
      this.v.setState(lt, 'running');
      h = { host: e.host, startedAt: time, durationMs: 0, itemsDone: 0, details: [], lt };
      task.hosts.set(e.host, h);
    }
    return h;
  }

  /**
   * Live titles: elapsed times tick, retries and progress show as they arrive. The live tree
   * is cut to the terminal's height, running hosts first.
   */
  refresh(now: number, rows: number): void {
    let room = Math.max(3, rows - 2) - this.tasks.length;
    for (const task of this.tasks) {
      task.lt.title$ = liveTaskTitle(task, now);
      for (const h of task.hosts.values()) {
        if (h.status !== undefined) continue;
        h.lt.title$ = runningHostTitle(h, now);
        // sent every tick: listr2 only buffers output for a host line it has drawn once
        if (h.progress !== undefined) h.lt.output$ = h.progress;
      }
      const fit = fitHosts(task.hosts.values(), room);
      const children = fit.shown.map((h) => h.lt);
      if (fit.hidden > 0) {
        task.more ??= this.v.text('');
        task.more.title$ = `… ${fit.hidden} more hosts`;
        children.push(task.more);
      }
      room = Math.max(0, room - fit.used);
      const current = task.lt.subtasks ?? [];
      if (current.length !== children.length || current.some((c, i) => c !== children[i]))
        this.v.setChildren(task.lt, children);
    }
  }

  settleHost(h: HostView, task: TaskView): void {
    const status = finalStatus(h);
    if (status === undefined) {
      // settled without a result (interrupted, or the play ended): say so instead of spinning forever
      h.lt.title$ = unfinishedHostTitle(h);
      this.v.setState(h.lt, 'skipped');
      return;
    }
    h.lt.title$ = settledHostTitle(h, task, status, this.paint);
    this.v.setState(h.lt, STATE[status]);
  }

  private settleTask(task: TaskView): void {
    if (task.hosts.size === 0 && task.resumed) return; // done before, on every host: the resume line said so
    let worst: HostStatus | undefined;
    for (const h of task.hosts.values()) {
      this.settleHost(h, task);
      for (const d of h.details) this.v.task(`· ${d}`, h.lt);
      const st = finalStatus(h);
      if (st) worst = worse(worst, st);
    }
    const listAll = this.verbosity >= 1 || task.hosts.size <= LIST_ALL_HOSTS_UP_TO;
    // a task skipped everywhere is one line: listr2 would list its hosts only if it happened to
    // draw them live first, so never list them rather than sometimes
    const listed = [...task.hosts.values()].filter(
      (h) => worst !== 'skipped' && (listAll || !['ok', 'changed', 'skipped'].includes(finalStatus(h) ?? '')),
    );
    this.v.setChildren(
      task.lt,
      listed.map((h) => h.lt),
    );
    task.lt.title$ = settledTaskTitle(task);
    this.settledHosts.set(task.taskId, task.earlier + task.hosts.size);
    this.v.setState(task.lt, STATE[worst ?? 'ok']);
    this.permanent.push(task.lt);
  }

  /** Moves finished tasks (a finished prefix, keeping order; `all`: every task) to the permanent output. */
  settle(all: boolean): void {
    while (this.tasks.length > 0) {
      const first = this.tasks[0]!;
      const done = first.hosts.size === 0 || [...first.hosts.values()].every((h) => h.status !== undefined);
      if (!all && (!done || this.tasks.length === 1)) break;
      this.tasks.shift();
      this.settleTask(first);
    }
  }
}
