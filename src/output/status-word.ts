// The words the text outputs show for a task's outcome on a host. A rescued failure is a failure
// where it happens (the block's rescue, shown as cleanup, runs because of it): saying only
// "rescued" next to a green mark made a failed pull look like progress.
import type { HostStatus } from './events.js';

export function statusWord(status: HostStatus): string {
  return status === 'rescued' ? 'failed (rescued)' : status;
}

/** How a task in a block's rescue section is labelled (the way handlers are). */
export const CLEANUP_LABEL = 'CLEANUP';
