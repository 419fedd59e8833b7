// What every renderer takes and returns, so the CLI can pick one by name.
import type { EventBus } from './events.js';

export type Verbosity = 0 | 1 | 2 | 3;

export interface RenderOptions {
  stream: NodeJS.WritableStream;
  verbosity: Verbosity;
  /** ANSI colours; plain and json never colour unless asked. */
  color?: boolean;
  /** Clock for elapsed times and spinners; tests inject a fixed one. */
  now?: () => number;
}

export interface AttachedRenderer {
  /** Resolves when everything is written (call after the run ends). */
  done(): Promise<void>;
}

export type AttachRenderer = (bus: EventBus, opts: RenderOptions) => AttachedRenderer;

/** Resolves once everything written so far to the stream has been handed to the OS. */
export function flushed(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => {
    if (!stream.writable) return resolve();
    stream.write('', () => resolve());
  });
}
