// Where each host of a free-strategy batch is in the play, and waiting until every host is
// past a point. A host's position is the path of the step it runs (or is about to); walkers
// yield steps in increasing path order, so a host whose position is beyond a point, or who
// left the play, will never run that point's task again.
import { comparePaths } from './strategy-linear.js';

export class FreeBarrier {
  private readonly pos = new Map<string, readonly number[]>();
  private readonly waiting: Array<{ point: readonly number[]; wake: () => void }> = [];

  constructor(
    hosts: readonly string[],
    /** The play ended or the run was interrupted: nobody waits any more. */
    private readonly released: () => boolean,
  ) {
    for (const h of hosts) this.pos.set(h, []);
  }

  /** The host is about to run the step at `path`. */
  at(host: string, path: readonly number[]): void {
    this.pos.set(host, path);
    this.check();
  }

  /** The host left the play (done, failed, ended). */
  left(host: string): void {
    this.pos.delete(host);
    this.check();
  }

  /** Resolves once every host still in the play is beyond `point`. */
  passedByAll(point: readonly number[]): Promise<void> {
    if (this.released() || this.allBeyond(point)) return Promise.resolve();
    return new Promise((wake) => this.waiting.push({ point, wake }));
  }

  private allBeyond(point: readonly number[]): boolean {
    for (const p of this.pos.values()) if (comparePaths(p, point) <= 0) return false;
    return true;
  }

  private check(): void {
    if (this.waiting.length === 0) return;
    const free = this.released();
    // The earliest position of any host decides for every waiter: one pass, not one per waiter.
    let first: readonly number[] | undefined;
    for (const p of this.pos.values()) if (!first || comparePaths(p, first) < 0) first = p;
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const w = this.waiting[i]!;
      if (free || !first || comparePaths(first, w.point) > 0) {
        this.waiting.splice(i, 1);
        w.wake();
      }
    }
  }
}
