// Ctrl-C and SIGTERM (a cancelled CI job) during a run: the first stops scheduling and lets the
// run end cleanly (the executor takes it from the AbortSignal); the second quits at once.
import { EXIT } from '../errors.js';
import type { EventBus } from '../output/events.js';

export interface RunSignals {
  signal: AbortSignal;
  /** Stops listening (the run ended). */
  detach(): void;
}

export function watchSignals(bus: EventBus, stdout: NodeJS.WriteStream): RunSignals {
  const controller = new AbortController();
  let interrupts = 0;
  const onSignal = () => {
    interrupts++;
    if (interrupts === 1) {
      bus.emit({
        type: 'warning',
        time: Date.now(),
        message: 'interrupted: press Ctrl-C again to quit at once (running tasks are then left as they are)',
      });
      controller.abort();
    } else {
      if (stdout.isTTY) stdout.write('\x1b[?25h');
      process.exit(EXIT.interrupted);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    detach: () => {
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
    },
  };
}
