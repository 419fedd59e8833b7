// JSON Lines: one event per line, exactly as in schemas/events.json (events are already
// redacted by the bus). For machines; verbosity and colour do not apply.
import type { EventBus } from '../events.js';
import { compactJson } from '../format.js';
import { type AttachedRenderer, flushed, type RenderOptions } from '../renderer.js';

export function attach(bus: EventBus, opts: RenderOptions): AttachedRenderer {
  const off = bus.on((e) => {
    opts.stream.write(`${compactJson(e)}\n`);
  });
  return {
    done: async () => {
      off();
      await flushed(opts.stream);
    },
  };
}
