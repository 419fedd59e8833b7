// The text of the TTY renderer's lines: a task's and a host's title, live and settled.
import { type Paint, STATUS_COLOR } from '../color.js';
import type { HostStatus } from '../events.js';
import { formatDuration, formatItem, oneLine } from '../format.js';
import { CLEANUP_LABEL, statusWord } from '../status-word.js';
import { type HostView, statusCounts, type TaskView } from './tty-model.js';

const taskTitle = (t: TaskView): string => (t.handler ? `HANDLER ${t.name}` : t.cleanup ? `${CLEANUP_LABEL} ${t.name}` : t.name);

/** A running task: its name and time so far. */
export const liveTaskTitle = (t: TaskView, now: number): string =>
  `${taskTitle(t)}  ${formatDuration(now - t.startedAt)}`;

/** A finished task: its name, time and its hosts counted by outcome. */
export function settledTaskTitle(t: TaskView): string {
  const earlier = t.earlier ? `; ${t.earlier} more above` : '';
  const counts = t.hosts.size ? `  (${statusCounts(t)}${earlier})` : '';
  return `${taskTitle(t)}  ${formatDuration(t.endedAt - t.startedAt)}${counts}`;
}

/** A running host: elapsed time, loop items done, the retry under way. */
export function runningHostTitle(h: HostView, now: number): string {
  const items = h.itemsDone > 0 ? `${h.itemsDone} item${h.itemsDone === 1 ? '' : 's'} done` : '';
  const extra = [items, h.retry].filter(Boolean).join('  ');
  return `${h.host}${formatItem(h.item)}  ${formatDuration(now - h.startedAt)}${extra ? `  ${extra}` : ''}`;
}

/** A host settled without a result (interrupted, or the play ended). */
export const unfinishedHostTitle = (h: HostView): string => `${h.host}${formatItem(h.item)}  unfinished`;

/** A finished host: its outcome, time, message and retries. */
export function settledHostTitle(h: HostView, task: TaskView, status: HostStatus, paint: Paint): string {
  const r = h.retried;
  const retried = r ? ` · ${r.count} ${r.count === 1 ? 'retry' : 'retries'}${r.last ? `, last: ${oneLine(r.last)}` : ''}` : '';
  const msg = `${h.msg ? `: ${oneLine(h.msg)}` : ''}${retried}`;
  const duration = h.status === undefined ? task.endedAt - h.startedAt : h.durationMs;
  return `${h.host}${formatItem(h.status === undefined ? h.item : undefined)}  ${paint(STATUS_COLOR[status], statusWord(status))} ${formatDuration(duration)}${msg}`;
}
