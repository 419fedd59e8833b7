// Live renderer for a terminal: a tree play -> task -> hosts with spinners, elapsed times,
// "retrying 2/10" and a progress line for long waits. Written on plain ANSI escapes rather
// than listr2: the executor drives the run and we only observe events, which listr2's
// task-runner model does not fit. Finished tasks scroll up as permanent text; only unfinished
// ones are redrawn (cursor up + erase below), truncated to the terminal width so nothing wraps.
import { type ColorName, painter, STATUS_COLOR } from '../color.js';
import { diffLines } from '../diff-lines.js';
import type { EventBus, HostStatus, TsbmEvent } from '../events.js';
import { compactJson, formatDuration, formatItem, formatProgress, oneLine, sanitizeDeep } from '../format.js';
import { recapLines } from '../recap.js';
import { type AttachedRenderer, flushed, type RenderOptions } from '../renderer.js';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const FRAME_MS = 100;
/** Above this many hosts a finished task lists only the hosts that did not go well (unless -v). */
const LIST_ALL_HOSTS_UP_TO = 10;

const ICON: Record<HostStatus, string> = {
  ok: '✔',
  changed: '✔',
  failed: '✖',
  unreachable: '✖',
  skipped: '↷',
  rescued: '↺',
  ignored: '!',
};

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
  progress?: string;
  /** -v lines (arguments, results) shown under the host once its task is finished. */
  details: string[];
}

interface TaskView {
  taskId: string;
  name: string;
  handler: boolean;
  startedAt: number;
  endedAt: number;
  hosts: Map<string, HostView>;
}

interface Row {
  indent: number;
  icon: string;
  color: ColorName;
  text: string;
}

const WORSE: HostStatus[] = ['skipped', 'ok', 'changed', 'ignored', 'rescued', 'failed', 'unreachable'];
const worse = (a: HostStatus | undefined, b: HostStatus): HostStatus =>
  a === undefined || WORSE.indexOf(b) > WORSE.indexOf(a) ? b : a;

export function attach(bus: EventBus, opts: RenderOptions): AttachedRenderer {
  const { stream, verbosity } = opts;
  const now = opts.now ?? Date.now;
  const paint = painter(opts.color !== false);
  const tty = stream as NodeJS.WritableStream & { columns?: number; rows?: number };
  const tasks: TaskView[] = [];
  let pending: string[] = []; // permanent lines not yet written
  let liveLines = 0;
  let timer: NodeJS.Timeout | undefined;
  let finished = false;

  const showCursor = () => stream.write('\x1b[?25h');

  /** A host's status for the permanent text: a loop that never reported its end shows its worst item. */
  const finalStatus = (h: HostView): HostStatus | undefined => h.status ?? h.worst;

  const hostRow = (h: HostView, indent: number, t: number, final = false): Row => {
    const item = formatItem(h.item);
    const status = final ? finalStatus(h) : h.status;
    if (status === undefined && final) {
      // settled without a result (interrupted, or the play ended): say so instead of spinning forever
      return { indent, icon: '…', color: 'gray', text: `${h.host}${item}  unfinished` };
    }
    if (status === undefined) {
      const items = h.itemsDone > 0 ? `${h.itemsDone} item${h.itemsDone === 1 ? '' : 's'} done` : '';
      const extra = [items, h.retry, h.progress].filter(Boolean).join('  ');
      return {
        indent,
        icon: SPINNER[Math.floor(t / 80) % SPINNER.length]!,
        color: 'cyan',
        text: `${h.host}${item}  ${formatDuration(t - h.startedAt)}${extra ? `  ${extra}` : ''}`,
      };
    }
    const msg = h.msg ? `: ${oneLine(h.msg)}` : '';
    return {
      indent,
      icon: ICON[status],
      color: STATUS_COLOR[status],
      text: `${h.host}${item}  ${status} ${formatDuration(h.durationMs)}${msg}`,
    };
  };

  const taskOutcome = (task: TaskView): HostStatus | undefined => {
    let out: HostStatus | undefined;
    for (const h of task.hosts.values()) {
      if (h.status === undefined) return undefined;
      out = worse(out, h.status);
    }
    return out;
  };

  const taskTitle = (task: TaskView) => (task.handler ? `HANDLER ${task.name}` : task.name);

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

  /** Permanent text of a finished task. */
  const settledRows = (task: TaskView): Row[] => {
    let worst: HostStatus | undefined;
    for (const h of task.hosts.values()) {
      const st = finalStatus(h);
      if (st) worst = worse(worst, st);
    }
    const outcome = worst ?? 'ok';
    const head: Row = {
      indent: 0,
      icon: ICON[outcome],
      color: STATUS_COLOR[outcome],
      text: `${taskTitle(task)}  ${formatDuration(task.endedAt - task.startedAt)}${task.hosts.size ? `  (${summary(task)})` : ''}`,
    };
    const listAll = verbosity >= 1 || task.hosts.size <= LIST_ALL_HOSTS_UP_TO;
    const hosts = [...task.hosts.values()].filter(
      (h) => listAll || !['ok', 'changed', 'skipped'].includes(finalStatus(h) ?? 'unfinished'),
    );
    return [
      head,
      ...hosts.flatMap((h) => [
        hostRow(h, 4, task.endedAt, true),
        ...h.details.map((text): Row => ({ indent: 6, icon: '·', color: 'gray', text })),
      ]),
    ];
  };

  /** Rows of the unfinished tasks, cut to fit the terminal height. */
  const liveRows = (t: number, maxRows: number): Row[] => {
    const rows: Row[] = [];
    for (const task of tasks) {
      rows.push({
        indent: 0,
        icon: SPINNER[Math.floor(t / 80) % SPINNER.length]!,
        color: 'cyan',
        text: `${taskTitle(task)}  ${formatDuration(t - task.startedAt)}`,
      });
      // running hosts first: they are what the operator is waiting for
      const hosts = [...task.hosts.values()].sort((a, b) => Number(a.status !== undefined) - Number(b.status !== undefined));
      for (const h of hosts) rows.push(hostRow(h, 4, t));
    }
    if (rows.length <= maxRows) return rows;
    const shown = rows.slice(0, Math.max(1, maxRows - 1));
    shown.push({ indent: 4, icon: '…', color: 'gray', text: `${rows.length - shown.length} more lines` });
    return shown;
  };

  const fitRow = (r: Row, width: number): string => {
    const room = Math.max(1, width - r.indent - 2);
    const text = r.text.length > room ? `${r.text.slice(0, room - 1)}…` : r.text;
    return `${' '.repeat(r.indent)}${paint(r.color, r.icon)} ${text}`;
  };

  /** Moves settled tasks (a finished prefix, keeping order) to the permanent output. */
  const settle = (all: boolean) => {
    while (tasks.length > 0) {
      const first = tasks[0]!;
      const done = taskOutcome(first) !== undefined || first.hosts.size === 0;
      if (!all && (!done || tasks.length === 1)) break;
      tasks.shift();
      // permanent text may wrap (it is never redrawn), so it keeps every character
      pending.push(...settledRows(first).map((r) => fitRow(r, Number.POSITIVE_INFINITY)));
    }
  };

  const render = () => {
    const t = now();
    const width = Math.max(20, (tty.columns ?? 80) - 1);
    const maxRows = Math.max(3, (tty.rows ?? 24) - 2);
    let out = liveLines > 0 ? `\x1b[${liveLines}F\x1b[J` : '';
    if (pending.length > 0) out += `${pending.join('\n')}\n`;
    pending = [];
    const live = finished ? [] : liveRows(t, maxRows).map((r) => fitRow(r, width));
    if (live.length > 0) out += `${live.join('\n')}\n`;
    liveLines = live.length;
    if (out) stream.write(out);
  };

  /** The view of a task, re-opened if it was already settled (free strategy: a slow host arrives late). */
  const taskOf = (e: { taskId: string; task: string; time: number }): TaskView => {
    let task = tasks.find((x) => x.taskId === e.taskId);
    if (!task) {
      task = { taskId: e.taskId, name: e.task, handler: false, startedAt: e.time, endedAt: e.time, hosts: new Map() };
      tasks.push(task);
    }
    return task;
  };

  const hostOf = (e: { taskId: string; task: string; host: string }, time: number): HostView => {
    const task = taskOf({ ...e, time });
    let h = task.hosts.get(e.host);
    if (!h) {
      h = { host: e.host, startedAt: time, durationMs: 0, itemsDone: 0, details: [] };
      task.hosts.set(e.host, h);
    }
    return h;
  };

  const permanent = (...lines: string[]) => pending.push(...lines);

  const start = () => {
    if (timer || finished) return;
    stream.write('\x1b[?25l');
    process.once('exit', showCursor);
    timer = setInterval(render, FRAME_MS);
    timer.unref();
  };

  const onEvent = (raw: TsbmEvent): void => {
    const e = sanitizeDeep(raw);
    if (e.type !== 'run_end') start();
    switch (e.type) {
      case 'run_start':
        if (verbosity >= 1) permanent(`tsbm ${e.version}: run ${e.runId} of ${e.playbook}`);
        break;
      case 'play_start':
        settle(true);
        permanent('', paint('bold', `PLAY [${e.play}]`));
        break;
      case 'task_start':
        tasks.push({
          taskId: e.taskId,
          name: e.task,
          handler: e.handler === true,
          startedAt: e.time,
          endedAt: e.time,
          hosts: new Map(),
        });
        settle(false);
        break;
      case 'host_task_start': {
        const h = hostOf(e, e.time);
        h.status = undefined;
        h.retry = undefined;
        h.progress = undefined;
        if (h.durationMs === 0) h.startedAt = e.time;
        if (verbosity >= 1 && e.args !== undefined) h.details.push(`args: ${compactJson(e.args)}`);
        break;
      }
      case 'host_result': {
        const h = hostOf(e, e.time - e.durationMs);
        const task = taskOf(e);
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
        if (e.diff) permanent(...diffLines(e.diff.before, e.diff.after, e.diff.path ?? e.task));
        if (verbosity >= 1 && e.result && Object.keys(e.result).length > 0) {
          h.details.push(`result${formatItem(e.item)}: ${compactJson(e.result)}`);
        }
        settle(false);
        break;
      }
      case 'retry': {
        const h = hostOf(e, e.time);
        h.retry = `retrying ${e.attempt}/${e.retries}${e.msg ? `: ${oneLine(e.msg, 80)}` : ''}`;
        break;
      }
      case 'progress': {
        const h = hostOf(e, e.time);
        h.progress = formatProgress(e, false); // the host line shows elapsed time already
        break;
      }
      case 'log':
        if (e.level <= verbosity) {
          const prefix = `  ${e.host ? `[${e.host}] ` : ''}`;
          permanent(...e.message.split('\n').map((l) => paint('gray', prefix + l)));
        }
        break;
      case 'warning':
        permanent(`${paint('magenta', '[WARNING]:')} ${e.host ? `[${e.host}] ` : ''}${e.task ? `${e.task}: ` : ''}${oneLine(e.message, 2000)}`);
        break;
      case 'recap':
        settle(true);
        permanent('', ...recapLines(e.stats, e.durationMs, paint));
        break;
      case 'run_end':
        stop();
        return;
    }
    if (pending.length > 0) render();
  };

  const stop = () => {
    if (finished) return;
    settle(true);
    finished = true;
    if (timer) clearInterval(timer);
    render();
    if (timer) showCursor();
    process.removeListener('exit', showCursor);
  };

  const off = bus.on(onEvent);
  return {
    done: async () => {
      off();
      stop();
      await flushed(stream);
    },
  };
}
