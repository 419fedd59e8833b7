// Live renderer for a terminal, on listr2: a tree task -> hosts with spinners, elapsed times,
// "retrying 2/10" and a progress line for long waits, under permanent PLAY headers. The
// executor runs the tasks; the renderer keeps a model of them from events (tty-events.ts into
// tty-tree.ts) and drives listr2 Tasks (tty-listr.ts) from it. Finished tasks become permanent
// text; only unfinished ones stay live. This file paces it: events in order, a tick for the clocks.
import { painter } from '../color.js';
import type { EventBus, TsbmEvent } from '../events.js';
import { type AttachedRenderer, flushed, type RenderOptions } from '../renderer.js';
import { applyEvent } from './tty-events.js';
import { createListrView } from './tty-listr.js';
import { TtyTree } from './tty-tree.js';

const TICK_MS = 100;

export function attach(bus: EventBus, opts: RenderOptions): AttachedRenderer {
  const { stream, verbosity } = opts;
  const now = opts.now ?? Date.now;
  const paint = painter(opts.color !== false);
  const rows = () => (stream as NodeJS.WritableStream & { rows?: number }).rows ?? 24;
  let tree: TtyTree | undefined;
  let shownLive = '';
  let chain: Promise<void> = createListrView(stream, opts.color !== false).then((v) => {
    tree = new TtyTree(v, verbosity, paint);
  });
  let ticker: NodeJS.Timeout | undefined;
  let finished = false;

  /** Hands what changed to listr2: permanent text printed, live tree swapped when its tasks change. */
  const sync = async (t: TtyTree) => {
    t.refresh(now(), rows());
    const live = finished ? [] : t.tasks.map((x) => x.lt);
    const key = live.map((x) => x.id).join(',');
    const out = t.takePermanent();
    if (out.length === 0 && key === shownLive) return;
    shownLive = key;
    await t.v.flush(out, live);
  };

  const onEvent = (e: TsbmEvent): void => {
    if (!ticker && !finished) {
      ticker = setInterval(() => {
        if (tree && !finished) tree.refresh(now(), rows());
      }, TICK_MS);
      ticker.unref();
    }
    chain = chain.then(async () => {
      if (!tree || (finished && e.type !== 'run_end')) return;
      if (applyEvent(tree, e, verbosity)) finished = true;
      await sync(tree);
    });
  };

  const off = bus.on(onEvent);
  return {
    done: async () => {
      off();
      await chain.catch(() => undefined);
      if (ticker) clearInterval(ticker);
      if (tree) {
        if (!finished) {
          tree.settle(true);
          finished = true;
          await sync(tree);
        }
        await tree.v.stop();
      }
      await flushed(stream);
    },
  };
}
