// What the TTY renderer knows of the run: a view per live task and per host under it, built from
// events (tty-events.ts), and the rules for ranking outcomes. No drawing here.
import type { HostStatus } from '../events.js';
import { statusWord } from '../status-word.js';
import type { ListrTask, TaskState } from './tty-listr.js';

export interface HostView {
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

export interface TaskView {
  taskId: string;
  name: string;
  handler: boolean;
  /** In a block's rescue section: cleanup after a failure. */
  cleanup: boolean;
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

/** Outcomes from best to worst: a task's mark is its worst host's. */
const WORSE: HostStatus[] = ['skipped', 'ok', 'changed', 'ignored', 'rescued', 'failed', 'unreachable', 'interrupted'];

export const worse = (a: HostStatus | undefined, b: HostStatus): HostStatus =>
  a === undefined || WORSE.indexOf(b) > WORSE.indexOf(a) ? b : a;

/** listr2 knows done, failed and skipped; the status word in the title says the rest. */
export const STATE: Record<HostStatus, TaskState> = {
  ok: 'ok',
  changed: 'ok',
  rescued: 'failed', // the step failed; the rescue that follows is cleanup
  ignored: 'ok',
  skipped: 'skipped',
  failed: 'failed',
  unreachable: 'failed',
  interrupted: 'failed', // stopped by the run: never a pass
};

/** A host's outcome: its result, else (a loop cut short) the worst of its items so far. */
export const finalStatus = (h: HostView): HostStatus | undefined => h.status ?? h.worst;

/** `2 ok, 1 failed`: a task's hosts counted by outcome, best first. */
export function statusCounts(task: TaskView): string {
  const counts = new Map<HostStatus, number>();
  for (const h of task.hosts.values()) {
    const st = finalStatus(h);
    if (st) counts.set(st, (counts.get(st) ?? 0) + 1);
  }
  return WORSE.filter((s) => counts.has(s))
    .map((s) => `${counts.get(s)} ${statusWord(s)}`)
    .join(', ');
}
