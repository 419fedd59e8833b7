// Where a run's events go besides the journal: the renderer the output mode names (listr2 on a
// terminal, plain lines, JSON Lines) and the JUnit writer. Each is loaded only when used.
import type { RunOptions } from '../executor/options.js';
import type { EventBus } from '../output/events.js';
import type { AttachedRenderer, AttachRenderer, Verbosity } from '../output/renderer.js';
import type { RunIo } from './request.js';

const RENDERERS: Record<RunOptions['output'], () => Promise<{ attach: AttachRenderer }>> = {
  tty: () => import('../output/renderers/tty.js'),
  plain: () => import('../output/renderers/plain.js'),
  json: () => import('../output/renderers/json.js'),
};

export interface RunOutputs {
  /** Resolves once every output has written everything (JUnit: its file). */
  done(): Promise<void>;
}

export async function attachOutputs(bus: EventBus, opts: RunOptions, verbosity: Verbosity, io: RunIo): Promise<RunOutputs> {
  const { attach } = await RENDERERS[opts.output]();
  const attached: AttachedRenderer[] = [attach(bus, { stream: io.stdout, verbosity, color: io.color })];
  if (opts.junit) {
    const { attachJUnit } = await import('../output/junit.js');
    attached.push(attachJUnit(bus, opts.junit, opts.junitCases ?? 'host'));
  }
  let closing: Promise<void> | undefined;
  return {
    done: () => {
      closing ??= (async () => {
        for (const a of attached) await a.done();
      })();
      return closing;
    },
  };
}
