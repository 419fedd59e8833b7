// A task's outcome on a host, decided in one place: an error or a module result becomes a
// registered result (unreachable and interrupted ones included), the result a status (what the
// events, the recap and every output report), and the status how the host's walk goes on.
import { TsbmError } from '../errors.js';
import type { HostStatus } from '../output/events.js';
import type { Outcome } from './host-walker.js';
import type { Registered } from './result.js';

/** The one notion of "unreachable": an error of kind unreachable (the connection layer's UnreachableError). */
export function isUnreachable(e: unknown): e is TsbmError {
  return e instanceof TsbmError && e.kind === 'unreachable';
}

/** Why a task was stopped by the run (the first Ctrl-C for a wait, the end of the grace period for any task). */
export class Interrupted extends Error {
  override readonly name = 'Interrupted';
}

export const isInterrupt = (e: unknown): e is Interrupted => e instanceof Interrupted;

/**
 * This run no longer holds the node (its lock was lost or taken, or the node store cannot vouch
 * for it): the host's steps stop, and it fails with this message.
 */
export class NodeNotHeld extends Error {
  override readonly name = 'NodeNotHeld';
}

/** The run stopped before the task started (the journal could not record it). */
export class Stopped extends Error {
  override readonly name = 'Stopped';
}

export function unreachableResult(msg: string): Registered {
  return { changed: false, failed: false, unreachable: true, msg };
}

export function interruptedResult(msg: string): Registered {
  return { changed: false, failed: false, interrupted: true, msg };
}

/** The status a registered result gives its host, with the task's ignore_* keywords and an enclosing rescue. */
export function statusOf(reg: Registered, kw: { ignoreErrors: boolean; ignoreUnreachable: boolean; rescuable: boolean }): HostStatus {
  if (reg.interrupted) return 'interrupted';
  if (reg.unreachable) return kw.ignoreUnreachable ? 'ignored' : 'unreachable';
  if (reg.failed) return kw.ignoreErrors ? 'ignored' : kw.rescuable ? 'rescued' : 'failed';
  if (reg.skipped) return 'skipped';
  return reg.changed ? 'changed' : 'ok';
}

/** How the host's walk goes on after a task of this status (a rescued failure still enters the rescue). */
export function walkOutcome(status: HostStatus): Outcome['status'] {
  switch (status) {
    case 'unreachable':
    case 'interrupted':
      return status;
    case 'failed':
    case 'rescued':
      return 'failed';
    default:
      return 'ok';
  }
}
