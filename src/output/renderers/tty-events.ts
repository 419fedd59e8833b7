// What each event changes in the TTY renderer's tree (tty-tree.ts). Returns true on run_end:
// nothing more is drawn after it.
import { diffLines } from '../diff-lines.js';
import type { EventOf, TsbmEvent } from '../events.js';
import { compactJson, formatItem, formatProgress, oneLine, problemLine, sanitizeDeep, withoutPayload } from '../format.js';
import { recapLines } from '../recap.js';
import { resumeLines } from '../resume-lines.js';
import { worse } from './tty-model.js';
import type { TtyTree } from './tty-tree.js';

export function applyEvent(tree: TtyTree, raw: TsbmEvent, verbosity: number): boolean {
  const e = sanitizeDeep(verbosity >= 1 ? raw : withoutPayload(raw));
  const { paint } = tree;
  switch (e.type) {
    case 'run_start':
      if (verbosity >= 1) tree.text(`tsbm ${e.version}: run ${e.runId} of ${e.playbook}`);
      break;
    case 'play_start':
      tree.settle(true);
      tree.text(paint('bold', `PLAY [${e.play}]`));
      break;
    case 'task_start':
      tree.taskOf(e, e.handler === true);
      tree.settle(false);
      break;
    case 'host_task_start':
      hostTaskStart(tree, e, verbosity);
      break;
    case 'host_result':
      hostResult(tree, e, verbosity);
      break;
    case 'retry': {
      const h = tree.hostOf(e, e.time);
      h.retry = `retrying ${e.attempt}/${e.retries}${e.msg ? `: ${oneLine(e.msg, 80)}` : ''}`;
      h.retried = { count: (h.retried?.count ?? 0) + 1, ...(e.msg ? { last: e.msg } : {}) };
      if (verbosity >= 1) tree.text(paint('yellow', `  [${e.host}] ${e.task}: ${h.retry}`));
      break;
    }
    case 'progress': {
      const h = tree.hostOf(e, e.time);
      h.progress = formatProgress(e, false); // the host line shows elapsed time already
      break;
    }
    case 'log':
      if (e.level <= verbosity) {
        const prefix = `  ${e.host ? `[${e.host}] ` : ''}`;
        tree.text(...e.message.split('\n').map((l) => paint('gray', prefix + l)));
      }
      break;
    case 'warning':
      tree.text(
        `${paint('magenta', '[WARNING]:')} ${e.host ? `[${e.host}] ` : ''}${e.task ? `${e.task}: ` : ''}${oneLine(e.message)}`,
      );
      break;
    case 'validation_error':
      tree.text(problemLine(e));
      break;
    case 'resume':
      tree.text(...resumeLines(e).map((l) => paint('cyan', l)));
      break;
    case 'recap':
      tree.settle(true);
      tree.text(...recapLines(e.stats, e.durationMs, paint, e.hosts));
      break;
    case 'run_end':
      tree.settle(true);
      return true;
  }
  return false;
}

function hostTaskStart(tree: TtyTree, e: EventOf<'host_task_start'>, verbosity: number): void {
  const h = tree.hostOf(e, e.time);
  if (h.status !== undefined) tree.v.setState(h.lt, 'running');
  h.status = undefined;
  h.retry = undefined;
  h.progress = undefined;
  if (h.durationMs === 0) h.startedAt = e.time;
  if (verbosity >= 1 && e.args !== undefined) h.details.push(`args: ${compactJson(e.args)}`);
}

function hostResult(tree: TtyTree, e: EventOf<'host_result'>, verbosity: number): void {
  if (e.resumed === true && verbosity < 2) {
    // done in the run this one resumes: the play's resume line counts it
    const task = tree.taskOf(e);
    if (task.hosts.delete(e.host)) task.resumed = (task.resumed ?? 0) + 1;
    return;
  }
  const h = tree.hostOf(e, e.time - e.durationMs);
  const task = tree.taskOf(e);
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
  if (h.status !== undefined) tree.settleHost(h, task);
  if (e.diff) tree.text(...diffLines(e.diff.before, e.diff.after, e.diff.path ?? e.task));
  if (verbosity >= 1 && e.result && Object.keys(e.result).length > 0) {
    h.details.push(`result${formatItem(e.item)}: ${compactJson(e.result)}`);
  }
  tree.settle(false);
}
