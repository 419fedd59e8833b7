// Leases and the fencing refusal, shared by both node stores: a lease carries an abort signal
// the store fires when it can no longer vouch for the lock, and a refused write or check throws
// one error shape naming the host, the key, the run and why.
import { TsbmError } from '../errors.js';
import { describeKey } from '../journal/node-key.js';
import type { NodeLease } from './types.js';

/** A lease as the stores keep it: the contract's view plus what messages need. */
export class StoreLease implements NodeLease {
  readonly #ctl = new AbortController();
  constructor(
    readonly key: string,
    readonly fence: string,
    /** The inventory names this run knows the node by. */
    readonly hosts: readonly string[],
    readonly runId: string,
  ) {}
  get lost(): AbortSignal {
    return this.#ctl.signal;
  }
  /** Marks the lease lost (once; the first reason stays). */
  lose(reason: string): void {
    if (!this.#ctl.signal.aborted) this.#ctl.abort(new Error(reason));
  }
  /** Why it was lost, when it was. */
  get lostReason(): string | undefined {
    return this.#ctl.signal.aborted ? String((this.#ctl.signal.reason as Error)?.message ?? this.#ctl.signal.reason) : undefined;
  }
}

/** The lease as this store's own kind, or a clear error for a lease from elsewhere. */
export function ownLease(lease: NodeLease, leases: ReadonlySet<StoreLease>, where: string): StoreLease {
  if (lease instanceof StoreLease && leases.has(lease)) return lease;
  throw new TsbmError('runtime', `node ${lease.key}: this lease was not taken from the node store (${where}) or was already released`, {
    hint: 'take the node with acquire() before writing its record',
  });
}

/** The fencing refusal: this run no longer holds the node, so it must not write or act on it. */
export function fencedOut(lease: StoreLease, why: string): TsbmError {
  lease.lose(why);
  const node = describeKey(lease.key);
  return new TsbmError('runtime', `host ${lease.hosts.join(', ')}: run ${lease.runId} no longer holds the node's lock (${why})${node ? `; ${node}` : ''}`, {
    host: lease.hosts[0] ?? lease.key,
    hint: 'this run stops acting on the node; check what holds it now (tsbm nodes show) before running again',
  });
}
