// src/util/wait.ts: the one wait loop's pacing.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { waitUntil, WaitTimeoutError } from '../../src/util/wait.js';

afterEach(() => {
  vi.useRealTimers();
});

/** When (ms after the start) each probe ran, until the `n`th says done. */
async function probeTimes(n: number, opts: { intervalMs: number; firstIntervalMs?: number }): Promise<number[]> {
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
