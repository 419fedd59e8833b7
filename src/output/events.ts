// Typed events: the executor emits, renderers / journal / JUnit subscribe. Nothing else prints.
// The types come from the published schema (event-schema.ts): one definition for both.
import type { Static } from '@sinclair/typebox';
import type { eventSchema, hostStatsSchema, hostStatusSchema } from './event-schema.js';
import type { Redactor } from './redact.js';

export type HostStatus = Static<typeof hostStatusSchema>;
export type HostStats = Static<typeof hostStatsSchema>;
export type TsbmEvent = Static<typeof eventSchema>;
type TsbmEventType = TsbmEvent['type'];
/** The event of one type, e.g. `EventOf<'host_result'>`. */
export type EventOf<T extends TsbmEventType> = Extract<TsbmEvent, { type: T }>;
export type Listener = (event: TsbmEvent) => void;

/**
 * A tiny synchronous bus. With a Redactor, every event is redacted once here, before any
 * listener sees it, so renderers, the journal and JUnit can never leak a secret.
 * Subscribers must not throw; a throwing one is isolated.
 */
export class EventBus {
  private readonly listeners: Listener[] = [];
  constructor(private readonly redactor?: Redactor) {}

  on(listener: Listener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  emit(event: TsbmEvent): void {
    const safe = this.redactor ? this.redactor.redactDeep(event) : event;
    for (const l of this.listeners) {
      try {
        l(safe);
      } catch {
        // a broken renderer must not break the run
      }
    }
  }
}
