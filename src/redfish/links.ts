// A Redfish link's target: on its own so that discovery.ts and expand.ts, which use each
// other, both take it from here.
import type { Json } from './transport.js';

/** The `@odata.id` of a link object, or undefined. */
export function linkOf(v: unknown): string | undefined {
  const id = v && typeof v === 'object' ? (v as Json)['@odata.id'] : undefined;
  return typeof id === 'string' && id ? id : undefined;
}
