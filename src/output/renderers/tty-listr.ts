// The listr2 side of the TTY renderer: listr2 Task objects (states, titles, output lines) drawn
// by listr2's DefaultRenderer. The executor runs the tasks, not listr2, so tty.ts drives each
// Task's state from events instead of handing listr2 functions to run.
// The screen is split in two: permanent text (finished tasks, warnings, logs, recap) that scrolls
// up, and a live tree of unfinished tasks below it. listr2 redraws its whole tree every frame,
// so the live tree holds only unfinished tasks; printing permanent text ends the current
// DefaultRenderer (which prints what it holds for good) and starts a fresh one for the rest.
import type {
  DefaultRenderer,
  Listr,
  ListrDefaultRendererOptions,
  ListrEventManager,
  ListrTaskObject,
} from 'listr2';
import { foldLine } from './tty-fold.js';

type Listr2 = typeof import('listr2');
type List = Listr<object, 'default', 'default'>;
export type ListrTask = ListrTaskObject<object, typeof DefaultRenderer, typeof DefaultRenderer>;

export type TaskState = 'running' | 'ok' | 'failed' | 'skipped';

/** One segment of the live view: a DefaultRenderer over an array of tasks we own. */
interface Segment {
  renderer: DefaultRenderer;
  tasks: ListrTask[];
  events: ListrEventManager;
}

export interface ListrView {
  /** A new top-level task (a playbook task), or a host line under `parent`. */
  task(title: string, parent?: ListrTask): ListrTask;
  /** A line of permanent text (no icon). */
  text(line: string): ListrTask;
  setState(task: ListrTask, state: TaskState): void;
  /** Replaces the host lines shown under a task (e.g. only the ones that went wrong). */
  setChildren(task: ListrTask, children: ListrTask[]): void;
  /** Prints `permanent` for good above the live tree, then shows `live` as the live tree. */
  flush(permanent: ListrTask[], live: ListrTask[]): Promise<void>;
  /** Ends the live view; nothing more is drawn. */
  stop(): Promise<void>;
}

const plain = (s: string) => s;
const INDENT = 4;

export async function createListrView(stream: NodeJS.WritableStream, color: boolean): Promise<ListrView> {
  const l2: Listr2 = await import('listr2');
  const {
    Listr: ListrClass,
    DefaultRenderer,
    ListrEventManager,
    ListrLogger,
    ListrTaskState,
    ProcessOutput,
    figures,
  } = l2;
  const lv = l2.ListrDefaultRendererLogLevels;

  const icon: ListrDefaultRendererOptions['icon'] = {
    [lv.FAILED_WITH_FAILED_SUBTASKS]: figures.cross,
    [lv.COMPLETED_WITH_FAILED_SUBTASKS]: figures.cross,
    // text lines are tasks that never start: drawn without an icon
    [lv.WAITING]: '',
  };
  const colors: ListrDefaultRendererOptions['color'] = color
    ? {}
    : Object.fromEntries(Object.values(lv).map((level) => [level, plain]));
  // The live tree goes to our stream; stray writes to the other std stream wait until a segment ends.
  const other = (stream === process.stderr ? process.stdout : process.stderr) as NodeJS.WriteStream;
  const options: ListrDefaultRendererOptions = {
    indentation: INDENT,
    showSubtasks: true,
    collapseSubtasks: false,
    collapseErrors: true,
    collapseSkips: true,
    showSkipMessage: false,
    showErrorMessage: false,
    clearOutput: false,
    removeEmptyLines: true,
    icon,
    color: colors,
  };
  const root: List = new ListrClass<object, 'default', 'default'>([], {
    renderer: 'default',
    fallbackRenderer: 'default',
    rendererOptions: options,
    fallbackRendererOptions: options,
    exitOnError: false,
    registerSignalListeners: false,
  });
  const subLists = new Map<ListrTask, List>();
  let segment: Segment | undefined;
  // Tasks ask for a redraw on every change (on root.events); with hundreds of hosts that is a
  // full tree per event. The renderer's own 100 ms frame is enough, so nobody listens there.

  const make = (list: List, title: string): ListrTask => {
    list.add({ title, task: () => undefined });
    const t = list.tasks[list.tasks.length - 1] as ListrTask;
    void t.check({}); // marks it enabled: DefaultRenderer hides tasks that are not
    return t;
  };

  /** listr2's renderer with lines folded to fit (see tty-fold.ts); everything else is listr2's. */
  class FittingRenderer extends DefaultRenderer {
    protected override format(message: string, icon: string, level: number): string[] {
      if (message.trim() === '') return [];
      const width = ((stream as NodeJS.WriteStream).columns ?? 80) - 1 - level * INDENT;
      const pad = ' '.repeat(level * INDENT);
      return foldLine(icon ? `${icon} ${message}` : message, width, ' '.repeat(INDENT))
        .filter((l) => l.trim() !== '')
        .map((l) => pad + l);
    }
  }

  const startSegment = async (tasks: ListrTask[]) => {
    const events = new ListrEventManager();
    const logger = new ListrLogger({
      useIcons: true,
      processOutput: new ProcessOutput(stream as NodeJS.WriteStream, other),
    });
    const renderer = new FittingRenderer(tasks, { ...options, logger }, events);
    segment = { renderer, tasks, events };
    // a hard exit (second Ctrl-C) mid-segment: put the cursor back and let held stderr lines out
    process.once('exit', onExit);
    await renderer.render();
  };
  const onExit = () => endSegment([...(segment?.tasks ?? [])]);

  const endSegment = (printed: ListrTask[]) => {
    if (!segment) return;
    const s = segment;
    segment = undefined;
    process.removeListener('exit', onExit);
    s.tasks.splice(0, s.tasks.length, ...printed);
    s.events.complete();
    s.renderer.end(); // clears the live tree and prints `printed` for good (clearOutput: false)
  };

  return {
    task(title, parent) {
      if (!parent) return make(root, title);
      let list = subLists.get(parent);
      if (!list) {
        list = new ListrClass<object, 'default', 'default'>([], root.options, parent);
        subLists.set(parent, list);
        parent.subtasks = [];
      }
      const t = make(list, title);
      parent.subtasks.push(t);
      return t;
    },
    text(line) {
      return make(root, line);
    },
    setState(task, state) {
      task.state$ = {
        running: ListrTaskState.STARTED,
        ok: ListrTaskState.COMPLETED,
        failed: ListrTaskState.FAILED,
        skipped: ListrTaskState.SKIPPED,
      }[state];
    },
    setChildren(task, children) {
      task.subtasks = children;
      for (const c of children) void c.check({});
    },
    async flush(permanent, live) {
      // a Task is drawn only once listr2 has checked it is enabled (an async check)
      const all = (ts: ListrTask[]): ListrTask[] => ts.flatMap((t) => [t, ...all(t.subtasks ?? [])]);
      await Promise.all(all([...permanent, ...live]).map((t) => t.check({})));
      if (permanent.length > 0) {
        if (!segment) await startSegment([]);
        endSegment(permanent);
        // printed for good: let go of them so a long run does not keep every Task
        const gone = new Set(all(permanent));
        root.tasks = root.tasks.filter((t) => !gone.has(t));
        for (const t of gone) subLists.delete(t);
      }
      if (live.length === 0) {
        endSegment([]);
        return;
      }
      if (segment) segment.tasks.splice(0, segment.tasks.length, ...live);
      else await startSegment([...live]);
    },
    async stop() {
      if (segment) {
        // the live tree only ever holds unfinished tasks: clear it without printing a blank line
        segment.tasks.length = 0;
        endSegment([]);
      }
    },
  };
}
