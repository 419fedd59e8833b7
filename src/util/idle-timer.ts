// A deadline that moves with progress: it fires when nothing arrived for `ms` (a stalled
// server), however long a download that keeps moving takes.
export interface IdleTimer {
  /** Something arrived: the deadline starts again. */
  kick(): void;
  stop(): void;
  /** Aborted when the timer fires. */
  readonly signal: AbortSignal;
}

export function idleTimer(ms: number, reason: () => Error): IdleTimer {
  const ac = new AbortController();
  let t: NodeJS.Timeout | undefined;
  const arm = () => {
    if (t) clearTimeout(t);
    t = setTimeout(() => ac.abort(reason()), ms);
    t.unref?.();
  };
  arm();
  return {
    kick: () => {
      if (!ac.signal.aborted) arm();
    },
    stop: () => {
      if (t) clearTimeout(t);
    },
    signal: ac.signal,
  };
}
