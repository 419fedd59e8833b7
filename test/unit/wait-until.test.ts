// src/util/wait.ts: the one wait loop's pacing.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { firstPollAfterMs, powerPollPauseMs } from '../../src/redfish/power-wait.js';
import { stalledAfterMs, waitUntil, WaitTimeoutError } from '../../src/util/wait.js';
import { sshWaitProgress } from '../../src/modules/ramdisk/ssh-wait-words.js';

afterEach(() => {
  vi.useRealTimers();
});

/** When (ms after the start) each probe ran, until the `n`th says done. */
async function probeTimes(
  n: number,
  opts: { intervalMs: number; firstIntervalMs?: number; firstProbeAfterMs?: number; pauseMs?: (i: { elapsedMs: number; probeMs: number }) => number },
): Promise<number[]> {
  vi.useFakeTimers();
  const start = Date.now();
  const at: number[] = [];
  const done = waitUntil(
    async () => {
      at.push(Date.now() - start);
      return at.length === n ? 'done' : undefined;
    },
    { timeoutMs: 60_000, what: 'x', ...opts },
  );
  await vi.advanceTimersByTimeAsync(30_000);
  await expect(done).resolves.toBe('done');
  return at;
}

describe('waitUntil', () => {
  it('probes every intervalMs', async () => {
    expect(await probeTimes(4, { intervalMs: 2000 })).toEqual([0, 2000, 4000, 6000]);
  });

  it('with firstIntervalMs, pauses start there and double up to intervalMs', async () => {
    expect(await probeTimes(6, { intervalMs: 2000, firstIntervalMs: 250 })).toEqual([0, 250, 750, 1750, 3750, 5750]);
  });

  it('times out naming what it waited for', async () => {
    vi.useFakeTimers();
    const p = waitUntil(async () => undefined, { timeoutMs: 1000, intervalMs: 300, firstIntervalMs: 100, what: 'PowerState On' });
    const caught = p.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(5000);
    const e = await caught;
    expect(e).toBeInstanceOf(WaitTimeoutError);
    expect((e as Error).message).toMatch(/^timed out after \ds waiting for PowerState On$/);
  });
});

describe('a wait that sees no change says so', () => {
  it('unchangedMs counts from the last outcome not seen before in the wait: numbers and errors seen already are no change', async () => {
    vi.useFakeTimers();
    // seconds 0-3 refused (ports differ), 4-5 a timeout, 6 refused again, 7-9 "not yet" without an error
    const said = (t: number) => (t < 4 || t === 6 ? `connect ECONNREFUSED 10.0.0.5:${22 + t}` : t < 6 ? 'timed out after 10s' : undefined);
    const start = Date.now();
    const seen: Array<[number, number]> = [];
    const done = waitUntil(
      async () => {
        const t = Math.round((Date.now() - start) / 1000);
        if (t >= 10) return 'up';
        const e = said(t);
        if (e) throw new Error(e);
        return undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000, what: 'x', onProgress: ({ elapsedMs, unchangedMs }) => seen.push([elapsedMs / 1000, unchangedMs / 1000]) },
    );
    await vi.advanceTimersByTimeAsync(20_000);
    await expect(done).resolves.toBe('up');
    expect(seen).toEqual([
      [0, 0], [1, 1], [2, 2], [3, 3],
      [4, 0], [5, 1], [6, 2],
      [7, 0], [8, 1], [9, 2],
    ]);
  });

  it('"for long" is a fifth of the timeout, at least 15 s, at most 2 min', () => {
    expect(stalledAfterMs(600_000)).toBe(120_000);
    expect(stalledAfterMs(3_600_000)).toBe(120_000);
    expect(stalledAfterMs(200_000)).toBe(40_000);
    expect(stalledAfterMs(20_000)).toBe(15_000);
  });

  it("wait_agent's words: the last error whole, then, once stuck, what it waits on and which variable changes it", () => {
    const lastError = new Error(`node01: cannot connect to 127.0.0.1:22: Connection lost before handshake ${'(detail) '.repeat(20)}`.trim());
    const o = { what: 'the installed system', target: 'root@127.0.0.1:22', stalledAfterMs: 120_000, hint: 'instance_ssh_port (22) says where' };
    const early = sshWaitProgress({ elapsedMs: 30_000, attempt: 9, lastError, unchangedMs: 30_000 }, o);
    expect(early).toBe(`waiting for SSH on root@127.0.0.1:22: 30.0s elapsed, attempt 9, last error: ${lastError.message}`);
    const stuck = sshWaitProgress({ elapsedMs: 125_000, attempt: 30, lastError, unchangedMs: 125_000 }, o);
    expect(stuck).toBe(
      `waiting for SSH on root@127.0.0.1:22: 2m05s elapsed, attempt 30, the same error for 2m05s: ${lastError.message}; still waiting for the installed system to answer there: instance_ssh_port (22) says where`,
    );
  });
});

describe('PowerState polling paced to the BMC (src/redfish/power-wait.ts)', () => {
  const paced = (probeMs = 0) => ({
    intervalMs: 2000,
    pauseMs: ({ elapsedMs }: { elapsedMs: number }) => powerPollPauseMs({ elapsedMs, probeMs, intervalMs: 2000 }),
  });

  it('looks every 0.25 s at first, then at a tenth of the time waited, up to poll_interval', async () => {
    const at = await probeTimes(30, paced());
    expect(at.slice(0, 11)).toEqual([0, 250, 500, 750, 1000, 1250, 1500, 1750, 2000, 2250, 2500]);
    // a change seen at most ~10% (or 0.25 s) after it happened, wherever it happens
    for (let i = 1; i < at.length; i++) {
      const gap = at[i]! - at[i - 1]!;
      expect(gap).toBeLessThanOrEqual(Math.max(250, at[i - 1]! * 0.1) + 1);
      expect(gap).toBeLessThanOrEqual(2000);
    }
    // a long wait costs few reads: 30 of them cover about 15 s
    expect(at.at(-1)!).toBeGreaterThan(14_000);
  });

  it('asks a slow BMC no faster than it answers', () => {
    expect(powerPollPauseMs({ elapsedMs: 500, probeMs: 1300, intervalMs: 2000 })).toBe(1300);
    expect(powerPollPauseMs({ elapsedMs: 500, probeMs: 5000, intervalMs: 2000 })).toBe(2000);
  });

  it("a change this BMC made before in the run is first looked at shortly before it is due", async () => {
    expect(firstPollAfterMs(undefined)).toBe(0);
    expect(firstPollAfterMs(300)).toBe(0); // quick: look at once
    expect(firstPollAfterMs(3000)).toBe(2400);
    expect((await probeTimes(3, { ...paced(), firstProbeAfterMs: 2400 })).slice(0, 2)).toEqual([2400, 2650]);
  });
});
