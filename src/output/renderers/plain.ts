// Plain renderer for CI logs: one stable, grep-able line per host result, no escape codes
// (unless colour is asked for), PLAY/TASK headers and the recap; a long wait's progress at
// growing intervals (progress-pace.ts). Retries of a host's task are
// one line, before its result, with their count and the last error (every attempt at -v).
// -v adds module arguments and results, -vv commands, -vvv stdout/stderr (via `log` events of
// those levels).
import { painter } from '../color.js';
import { STATUS_COLOR } from '../color.js';
import { diffLines } from '../diff-lines.js';
import type { EventBus, EventOf, TsbmEvent } from '../events.js';
import { compactJson, formatDuration, formatItem, formatProgress, oneLine, problemLine, sanitizeDeep, withoutPayload } from '../format.js';
import { recapLines } from '../recap.js';
import { resumeLines } from '../resume-lines.js';
import { ProgressPace } from './progress-pace.js';
import { CLEANUP_LABEL, statusWord } from '../status-word.js';
import { type AttachedRenderer, flushed, type RenderOptions } from '../renderer.js';

const HEADER_WIDTH = 80;

export function header(kind: string, name: string): string {
  const head = `${kind} [${name}] `;
  return head + '*'.repeat(Math.max(3, HEADER_WIDTH - head.length));
}

/**
 * The one line for a host result, e.g. `failed: [node2] Power off (0.4s): BMC said no`; a
 * failure a rescue section handles is `failed (rescued): ...`, its cleanup follows.
 */
export function resultLine(e: EventOf<'host_result'>, paint = painter(false)): string {
  const msg = e.msg ? `: ${oneLine(e.msg)}` : '';
  return `${paint(STATUS_COLOR[e.status], `${statusWord(e.status)}:`)} [${e.host}] ${e.task}${formatItem(e.item)} (${formatDuration(e.durationMs)})${msg}`;
}

/** The one line for a host's retries in a task: `retried: [node1] Power off: 7 retries, last: HTTP 503`. */
export function retriedLine(host: string, task: string, r: RetryTally, paint = painter(false)): string {
  return `${paint('yellow', 'retried:')} [${host}] ${task}: ${r.count} ${r.count === 1 ? 'retry' : 'retries'}${r.last ? `, last: ${oneLine(r.last)}` : ''}`;
}

export interface RetryTally {
  count: number;
  last?: string;
}

/**
 * Whether an event prints anything at this verbosity: the one place these rules live, checked
 * before the event is sanitized (most of a big run's events print nothing). Progress lines are
 * further rate-limited below.
 */
function printed(e: TsbmEvent, verbosity: number): boolean {
  switch (e.type) {
    case 'run_start':
    case 'run_end':
      return verbosity >= 1;
    case 'host_task_start':
      return verbosity >= 1 && e.args !== undefined;
    // a task the resumed run had done: the play's `resume` line says it for all of them
    case 'host_result':
      return e.resumed !== true || verbosity >= 2;
    case 'log':
      return e.level <= verbosity;
    default:
      return true;
  }
}

export function attach(bus: EventBus, opts: RenderOptions): AttachedRenderer {
  const { stream, verbosity } = opts;
  const paint = painter(opts.color === true);
  const pace = new ProgressPace();
  const write = (lines: string[]) => stream.write(`${lines.join('\n')}\n`);
  const forHost = (host: string | undefined) => (host ? `[${host}] ` : '');
  // Below -v, a host's retries in a task wait here and print as one line with its result.
  const retries = new Map<string, RetryTally & { host: string; task: string }>();
  const retriesOf = (host: string, taskId: string): string[] => {
    const key = `${host}\0${taskId}`;
    const r = retries.get(key);
    if (!r) return [];
    retries.delete(key);
    return [retriedLine(r.host, r.task, r, paint)];
  };
  // Under strategy: free the hosts are at different tasks, so a task's header is printed before
  // each run of its lines (again when lines of another task came between), never ahead of them.
  let free = false;
  const headers = new Map<string, string>(); // taskId -> its header line
  let shownHeader: string | undefined; // taskId whose header the last lines stand under
  const under = (taskId: string): string[] => {
    if (!free || shownHeader === taskId) return [];
    shownHeader = taskId;
    const h = headers.get(taskId);
    return h ? ['', h] : [];
  };

  const onEvent = (raw: TsbmEvent): void => {
    if (!printed(raw, verbosity)) return;
    const e = sanitizeDeep(verbosity >= 1 ? raw : withoutPayload(raw));
    switch (e.type) {
      case 'run_start':
        write([`tsbm ${e.version}: run ${e.runId} of ${e.playbook}`]);
        return;
      case 'play_start':
        free = e.strategy === 'free';
        shownHeader = undefined;
        write(['', paint('bold', header('PLAY', e.play))]);
        return;
      case 'task_start': {
        const line = paint('bold', header(e.handler ? 'RUNNING HANDLER' : e.rescue ? CLEANUP_LABEL : 'TASK', e.task));
        if (free) headers.set(e.taskId, line);
        else write(['', line]);
        return;
      }
      case 'host_task_start':
        write([...under(e.taskId), `  args: [${e.host}] ${compactJson(e.args)}`]);
        return;
      case 'host_result': {
        const lines = [...under(e.taskId), ...retriesOf(e.host, e.taskId), resultLine(e, paint)];
        if (e.diff) lines.push(...diffLines(e.diff.before, e.diff.after, e.diff.path ?? e.task));
        if (verbosity >= 1 && e.result && Object.keys(e.result).length > 0) {
          lines.push(`  result: [${e.host}] ${compactJson(e.result)}`);
        }
        write(lines);
        return;
      }
      case 'retry': {
        if (verbosity >= 1) {
          write([...under(e.taskId), `${paint('yellow', 'retrying:')} [${e.host}] ${e.task} (${e.attempt}/${e.retries})${e.msg ? `: ${oneLine(e.msg)}` : ''}`]);
          return;
        }
        const key = `${e.host}\0${e.taskId}`;
        const r = retries.get(key) ?? { host: e.host, task: e.task, count: 0 };
        r.count++;
        if (e.msg) r.last = e.msg;
        retries.set(key, r);
        return;
      }
      case 'progress': {
        const finished = e.total !== undefined && e.current === e.total;
        if (!pace.due(`${e.host}\0${e.taskId}`, e.time, e.message, finished)) return;
        write([...under(e.taskId), `progress: [${e.host}] ${e.task}: ${formatProgress(e)}`]);
        return;
      }
      case 'log': {
        const prefix = `  ${forHost(e.host)}`;
        write(e.message.split('\n').map((l) => prefix + l));
        return;
      }
      case 'warning':
        write([`${paint('magenta', '[WARNING]:')} ${forHost(e.host)}${e.task ? `${e.task}: ` : ''}${oneLine(e.message)}`]);
        return;
      case 'validation_error':
        write([problemLine(e)]);
        return;
      case 'resume':
        write(resumeLines(e).map((l) => paint('cyan', l)));
        return;
      case 'recap': {
        pace.clear();
        // retries of tasks that never reported a result (an interrupted run)
        const pending = [...retries.values()].map((r) => retriedLine(r.host, r.task, r, paint));
        retries.clear();
        write([...pending, '', ...recapLines(e.stats, e.durationMs, paint, e.hosts)]);
        return;
      }
      case 'run_end':
        write([`exit code ${e.exitCode}`]);
        return;
    }
  };
  const off = bus.on(onEvent);
  return {
    done: async () => {
      off();
      await flushed(stream);
    },
  };
}
