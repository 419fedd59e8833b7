// Fault knobs for the fake BMC. Rates draw from a seeded generator so a failing test replays
// the same sequence; the `first*` counts give fully deterministic "fail N times, then work".
import { seededRandom } from 'tsbm/lib/util/seeded-random.js';

export interface BmcFaults {
  /** Added to every response. */
  latencyMs?: number;
  /** Fraction (0..1) of requests answered 503 with Retry-After. */
  rate503?: number;
  /** Fraction (0..1) of requests whose connection is reset without an answer. */
  resetRate?: number;
  /** The first N requests are answered 503. */
  first503?: number;
  /** The first N requests (after any first503) get their connection reset. */
  firstResets?: number;
  /** Retry-After seconds sent with 503s (default 0). */
  retryAfterS?: number;
  /** Task monitors never complete. */
  stuckTaskMonitor?: boolean;
  /** PATCHes of Boot answer success but change nothing (some firmware does this). */
  ignoreBootOverride?: boolean;
  /** A requested `Once` boot override reads back `Continuous` (as some firmware does). */
  onceReadsContinuous?: boolean;
  /** InsertMedia refuses the optional Inserted/WriteProtected parameters (Supermicro X11 does). */
  strictInsertMedia?: boolean;
  /** GracefulShutdown is accepted but the OS never acts on it. */
  ignoreGracefulShutdown?: boolean;
  /**
   * The service root still advertises `$expand`, but the BMC serves collections with bare
   * member links ('ignored') or answers 400 ('refused') or 501 ('unimplemented'), as some
   * firmware does.
   */
  expandQuery?: 'ignored' | 'refused' | 'unimplemented';
  /**
   * The first InsertMedia POST loses its connection: 'before' the BMC acts on it, or 'after'
   * (the image is inserted, the answer never arrives).
   */
  dropInsertMedia?: 'before' | 'after';
  /** Seed for the rate-based faults. */
  seed?: number;
}

export type FaultDecision = 'ok' | '503' | 'reset';

export class FaultInjector {
  private n = 0;
  private rng: () => number;

  constructor(readonly faults: BmcFaults = {}) {
    this.rng = seededRandom(faults.seed ?? 1);
  }

  /** What happens to the next request. */
  next(): FaultDecision {
    const i = this.n++;
    const f = this.faults;
    const first503 = f.first503 ?? 0;
    if (i < first503) return '503';
    if (i < first503 + (f.firstResets ?? 0)) return 'reset';
    if (f.rate503 && this.rng() < f.rate503) return '503';
    if (f.resetRate && this.rng() < f.resetRate) return 'reset';
    return 'ok';
  }
}

