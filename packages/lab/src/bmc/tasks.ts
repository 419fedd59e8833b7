// The fake BMC's task monitors: an action answered 202 with a monitor that reports Running for a
// number of polls, then applies the action and reports Completed (or never does: a stuck monitor).
import type { ServerResponse } from 'node:http';
import { send } from './http.js';
import { ROOT } from './state.js';

interface Task {
  pollsLeft: number;
  apply: () => void;
  done: boolean;
}

export class TaskMonitors {
  private readonly tasks = new Map<string, Task>();
  private nextId = 1;

  constructor(
    private readonly polls: number,
    /** Monitors never complete (firmware whose task service hangs). */
    private readonly stuck: boolean,
  ) {}

  /** Answers 202 with a new monitor for `apply`, which runs when the monitor completes. */
  start(res: ServerResponse, apply: () => void): void {
    const monitor = `${ROOT}/TaskService/TaskMonitors/${this.nextId++}`;
    this.tasks.set(monitor, { pollsLeft: this.polls, apply, done: false });
    res.writeHead(202, { Location: monitor, 'Retry-After': '0', 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ '@odata.id': monitor, TaskState: 'Running' }));
  }

  /** Answers a GET of `path` when it is a monitor; false when it is not one. */
  poll(res: ServerResponse, path: string): boolean {
    const task = this.tasks.get(path);
    if (!task) return false;
    if (this.stuck || task.pollsLeft > 0) {
      task.pollsLeft--;
      res.writeHead(202, { 'Retry-After': '0', 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ TaskState: 'Running', PercentComplete: 50 }));
      return true;
    }
    if (!task.done) {
      task.done = true;
      task.apply();
    }
    send(res, 200, { TaskState: 'Completed', TaskStatus: 'OK', Messages: [] });
    return true;
  }
}
