// The one wait loop and the one retry-with-backoff used by modules, connections and the
// Redfish client. Both honour an AbortSignal and report progress through a callback (events).

export class WaitTimeoutError extends Error {
  constructor(
    message: string,
    readonly elapsedMs: number,
    readonly lastError: unknown,
  ) {
    super(message);
    this.name = 'WaitTimeoutError';
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason ?? new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The pace for waiting on something that may be ready any moment and costs little to ask (a
 * power change, a ramdisk's sshd): every quarter second at first, then a tenth of the time
 * waited so far (so ready is seen at most about 10% late, and a long wait asks rarely), never
 * faster than the last probe took, never slower than intervalMs.
 */
export function pacedPauseMs(p: { elapsedMs: number; probeMs: number; intervalMs: number }): number {
  const floor = Math.max(250, p.probeMs);
  return Math.min(p.intervalMs, Math.max(floor, p.elapsedMs * 0.1));
}

export interface WaitOptions<T = unknown> {
  timeoutMs: number;
  intervalMs: number;
  /**
   * The first pause, doubling up to intervalMs: a state that usually settles in well under one
   * interval (a fake BMC's power-on, a quick one's) is seen early, at the cost of a few probes.
   */
  firstIntervalMs?: number;
  /**
   * Decides each pause instead of the doubling (bounded by intervalMs and the timeout), from the
   * time waited so far and how long the last probe took.
   */
  pauseMs?: (info: { elapsedMs: number; attempt: number; probeMs: number }) => number;
  /** Wait this long before the first probe (default: probe at once). */
  firstProbeAfterMs?: number;
  signal?: AbortSignal;
  /**
   * Called after each unsuccessful attempt with the elapsed time, the last error, if any, and how
   * long the probe has said nothing it had not said before in this wait (`unchangedMs`: see
   * stalledAfterMs).
   */
  onProgress?: (info: { elapsedMs: number; attempt: number; lastError?: unknown; unchangedMs: number }) => void;
  /** What is being waited for, for the timeout message. */
  what: string;
  /**
   * A probe still running when the signal aborts is not waited for (the wait ends at once);
   * should it still produce a value (a connection), it is handed here to be released.
   */
  discard?: (value: T) => void;
}

/** `p`, or a rejection as soon as `signal` aborts; a value `p` brings after that goes to `late`. */
function unlessAborted<T>(p: Promise<T>, signal: AbortSignal | undefined, late?: (value: T) => void): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const onAbort = () => {
      done = true;
      reject(signal.reason ?? new Error('aborted'));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        if (done) late?.(v);
        else resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        if (!done) reject(e);
      },
    );
  });
}

/**
 * Calls `probe` until it returns a value other than undefined. A thrown error counts as
 * "not yet" and is kept as the last error for the timeout message.
 */
export async function waitUntil<T>(probe: () => Promise<T | undefined>, opts: WaitOptions<T>): Promise<T> {
  const start = Date.now();
  let lastError: unknown;
  // What the probe has said so far (digits aside: a port or a count changing is no news), and when
  // it last said something new: a host that is down may alternate between two errors, no change.
  const outcomes = new Set<string>();
  let newSince = start;
  let pauseMs = Math.min(opts.firstIntervalMs ?? opts.intervalMs, opts.intervalMs);
  if (opts.firstProbeAfterMs) await sleep(Math.min(opts.firstProbeAfterMs, opts.timeoutMs), opts.signal);
  for (let attempt = 1; ; attempt++) {
    opts.signal?.throwIfAborted();
    const probeStart = Date.now();
    try {
      const v = await unlessAborted(probe(), opts.signal, (late) => {
        if (late !== undefined) opts.discard?.(late);
      });
      if (v !== undefined) return v;
      lastError = undefined;
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      lastError = e;
    }
    const now = Date.now();
    const elapsedMs = now - start;
    const said = outcomeOf(lastError);
    if (!outcomes.has(said)) {
      outcomes.add(said);
      newSince = now;
    }
    opts.onProgress?.({ elapsedMs, attempt, lastError, unchangedMs: now - newSince });
    if (opts.pauseMs) pauseMs = Math.min(Math.max(0, opts.pauseMs({ elapsedMs, attempt, probeMs: Date.now() - probeStart })), opts.intervalMs);
    if (elapsedMs + pauseMs > opts.timeoutMs) {
      const last = lastError instanceof Error ? `; last error: ${lastError.message}` : '';
      throw new WaitTimeoutError(
        `timed out after ${Math.round(elapsedMs / 1000)}s waiting for ${opts.what}${last}`,
        elapsedMs,
        lastError,
      );
    }
    await sleep(pauseMs, opts.signal);
    pauseMs = Math.min(pauseMs * 2, opts.intervalMs);
  }
}

/** An attempt's outcome as a wait compares them: its error's message without digits, or "not yet". */
function outcomeOf(error: unknown): string {
  if (error === undefined) return '';
  return (error instanceof Error ? error.message : String(error)).replace(/\d+/g, '#');
}

/**
 * After how long without a change a wait says what it is waiting on and which setting changes it
 * (a fifth of its timeout, at least 15 s, at most 2 min): by then a ramdisk that was going to come
 * up usually has, and an operator watching wants to know what to check.
 */
export function stalledAfterMs(timeoutMs: number): number {
  return Math.min(120_000, Math.max(15_000, timeoutMs / 5));
}

export interface RetryOptions {
  retries: number; // attempts after the first
  baseDelayMs: number;
  maxDelayMs: number;
  signal?: AbortSignal;
  /** Decide whether an error is worth another try. */
  retryable: (err: unknown) => boolean;
  /** Lets a server's Retry-After win over the backoff. */
  delayFor?: (err: unknown) => number | undefined;
  onRetry?: (info: { attempt: number; retries: number; delayMs: number; error: unknown }) => void;
}

/** Exponential backoff with full jitter, bounded by `retries`. */
export async function retry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (e) {
      if (attempt >= opts.retries || !opts.retryable(e) || opts.signal?.aborted) throw e;
      const backoff = Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** attempt);
      const delayMs = opts.delayFor?.(e) ?? Math.round(backoff / 2 + (Math.random() * backoff) / 2);
      opts.onRetry?.({ attempt: attempt + 1, retries: opts.retries, delayMs, error: e });
      await sleep(delayMs, opts.signal);
    }
  }
}
