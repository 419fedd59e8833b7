// How often to read PowerState while a power change takes effect. BMCs differ by orders of
// magnitude (a fake one in milliseconds, sushy-tools in one to eleven seconds, real servers in
// seconds to minutes), so the pace adapts: polls come every quarter second at first, then at a
// tenth of the time waited so far (so a change is seen at most about 10% late, and a long wait
// costs few requests), never faster than the BMC answers, never slower than poll_interval; and
// once this BMC has made a change of a kind in this run, the next one of that kind is first
// looked at shortly before it is due.
import { pacedPauseMs, waitUntil } from '../util/wait.js';
import type { RedfishClient, Resource } from './client.js';
import { findSystem } from './discovery.js';
import { powerStateOf } from './power.js';

const FLOOR_MS = 250;
/** The first look at a change of a known duration: this share of it (it may go faster now). */
const EARLY_SHARE = 0.8;

export interface PauseInput {
  elapsedMs: number;
  /** How long the last PowerState read took: a slow BMC is not asked faster than it answers. */
  probeMs: number;
  intervalMs: number;
}

/** The pause before the next PowerState read. */
export function powerPollPauseMs(p: PauseInput): number {
  return pacedPauseMs(p);
}

/** When to look first: at once, unless this BMC's last change of this kind took a while. */
export function firstPollAfterMs(expectedMs: number | undefined): number {
  if (expectedMs === undefined || expectedMs < 2 * FLOOR_MS) return 0;
  return Math.round(expectedMs * EARLY_SHARE);
}

// What each BMC's changes took in this run, by ResetType (the client lives for one run).
const durations = new WeakMap<RedfishClient, Map<string, number>>();

export function expectedChangeMs(client: RedfishClient, resetType: string): number | undefined {
  return durations.get(client)?.get(resetType);
}

export function recordChange(client: RedfishClient, resetType: string, ms: number): void {
  const m = durations.get(client) ?? new Map<string, number>();
  durations.set(client, m);
  m.set(resetType, ms);
}

export interface PowerWait {
  timeoutMs: number;
  /** The longest pause between reads. */
  intervalMs: number;
  signal?: AbortSignal | undefined;
  onProgress?: (elapsedMs: number) => void;
  /** Run once, when the state has not changed this long after the first request (graceful to force). */
  escalate?: { afterMs: number; run: () => Promise<void> } | undefined;
}

/**
 * Reads PowerState, paced to this BMC, until it is `want`; the System as last read. A change
 * seen without escalation teaches the pace for the next change of that ResetType.
 */
export async function waitForPowerState(client: RedfishClient, want: 'On' | 'Off', resetType: string, w: PowerWait): Promise<Resource> {
  const start = Date.now();
  let escalated = false;
  return waitUntil(
    async () => {
      const sys = await findSystem(client);
      if (powerStateOf(sys) === want) {
        if (!escalated) recordChange(client, resetType, Date.now() - start);
        return sys;
      }
      if (w.escalate && !escalated && Date.now() - start >= w.escalate.afterMs) {
        escalated = true;
        await w.escalate.run();
      }
      return undefined;
    },
    {
      timeoutMs: w.timeoutMs,
      intervalMs: w.intervalMs,
      firstProbeAfterMs: firstPollAfterMs(expectedChangeMs(client, resetType)),
      pauseMs: ({ elapsedMs, probeMs }) => powerPollPauseMs({ elapsedMs, probeMs, intervalMs: w.intervalMs }),
      ...(w.signal ? { signal: w.signal } : {}),
      what: `PowerState ${want}`,
      ...(w.onProgress ? { onProgress: ({ elapsedMs }: { elapsedMs: number }) => w.onProgress?.(elapsedMs) } : {}),
    },
  );
}
