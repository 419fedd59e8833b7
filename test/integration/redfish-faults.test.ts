// The client under injected faults: 503s and connection resets are retried a bounded number
// of times and then fail clearly; task monitors are followed or time out; a BMC that ignores
// the boot override is caught by the read-back.
import { describe, expect, it } from 'vitest';
import { redfishBootDeviceModule } from '../../src/modules/redfish/redfish_boot_device.js';
import { redfishPowerModule } from '../../src/modules/redfish/redfish_power.js';
import { vmediaBootModule } from '../../src/modules/redfish/vmedia_boot.js';
import { findSystem } from '../../src/redfish/discovery.js';
import { redfishClientFor } from '../../src/redfish/pool.js';
import { postReset, resetAction } from '../../src/redfish/power.js';
import { type FakeBmcOptions, startFakeBmc } from '../../packages/lab/src/bmc/server.js';
import { closeAfterEach, driverInfo, MOCKUPS, makeCtx } from './redfish-helpers.js';

const IMAGE = 'http://10.0.0.1:8080/ramdisk.iso';
const FAST = { poll_interval: 0.02, timeout: 5, retry_max_delay: 0.02 };
const track = closeAfterEach();

async function lab(opts: Partial<FakeBmcOptions>, tree = 'hpe-ilo5-dl325-gen10plus') {
  const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/${tree}`, password: 'S3cret-pass!', ...opts });
  const t = makeCtx({ driver_info: driverInfo(bmc, { redfish_verify_ca: false }) });
  track(bmc, t);
  return { bmc, t, ctx: t.ctx };
}

describe('retries', () => {
  it('503s with Retry-After are retried, then the request succeeds', async () => {
    const { bmc, t } = await lab({ faults: { first503: 3 } });
    const r = await redfishPowerModule.run(t.ctx, { state: 'off', ...FAST });
    expect(r.power_state).toBe('Off');
    expect(t.retries.filter((m) => /^retry \d\/4 in \d+ ms \(BMC 127\.0\.0\.1:\d+\): GET \/redfish\/v1\/: HTTP 503$/.test(m))).toHaveLength(3);
    expect(bmc.state.resets).toEqual(['ForceOff']);
  });

  it('a BMC that always answers 503 fails after the bounded retries with the status and its message', async () => {
    const { bmc, t } = await lab({ faults: { rate503: 1 } });
    const err = (await redfishPowerModule.run(t.ctx, { state: 'off', ...FAST, request_retries: 2 }).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/Redfish GET https:\/\/127\.0\.0\.1:\d+\/redfish\/v1\/ on BMC 127\.0\.0\.1:\d+ .*\(HTTP 503\): The service is temporarily unavailable/);
    expect(bmc.requestCount()).toBe(3);
  });

  it('connection resets are retried, then the request succeeds', async () => {
    const { t } = await lab({ faults: { firstResets: 2 } });
    const r = await redfishPowerModule.run(t.ctx, { state: 'on', ...FAST });
    expect(r.changed).toBe(false);
    expect(t.retries).toHaveLength(2);
  });

  it('a BMC that keeps resetting fails clearly after the bounded retries', async () => {
    const { bmc, t } = await lab({ faults: { resetRate: 1 } });
    const err = (await redfishPowerModule.run(t.ctx, { state: 'on', ...FAST, request_retries: 3 }).catch((e: unknown) => e)) as Error & { hint?: string };
    expect(err.message).toMatch(/on BMC 127\.0\.0\.1:\d+ failed: (socket hang up|read ECONNRESET|.*reset)/);
    expect(err.hint).toMatch(/reachable/);
    expect(bmc.requestCount()).toBe(4);
  });

  it('a slow BMC hits the request timeout, is retried, and fails with the timeout', async () => {
    const { t } = await lab({ faults: { latencyMs: 300 } });
    const err = (await redfishPowerModule.run(t.ctx, { state: 'on', ...FAST, request_timeout: 0.05, request_retries: 1 }).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/no answer within 50 ms/);
  });

  it('random 503s and resets at a moderate rate are ridden out', async () => {
    const { bmc, t } = await lab({ faults: { rate503: 0.2, resetRate: 0.1, seed: 7 }, powerDelayMs: 20 });
    await redfishPowerModule.run(t.ctx, { state: 'off', ...FAST, request_retries: 8 });
    await vmediaBootModule.run(t.ctx, { image: IMAGE, ...FAST, request_retries: 8 });
    await redfishPowerModule.run(t.ctx, { state: 'on', ...FAST, request_retries: 8 });
    expect(bmc.state.powerState).toBe('On');
    expect(bmc.state.get('/redfish/v1/Managers/1/VirtualMedia/2')?.Image).toBe(IMAGE);
  });
});

describe('InsertMedia whose answer is lost', () => {
  for (const when of ['before', 'after'] as const) {
    it(`connection dropped ${when} the BMC acted: the slot is read, the image ends up inserted once`, async () => {
      const { bmc, t } = await lab({ faults: { dropInsertMedia: when } });
      await vmediaBootModule.run(t.ctx, { image: IMAGE, ...FAST });
      expect(bmc.state.get('/redfish/v1/Managers/1/VirtualMedia/2')).toMatchObject({ Image: IMAGE, Inserted: true });
      const inserts = bmc.requestCount('POST', 'InsertMedia');
      expect(inserts).toBe(when === 'before' ? 2 : 1);
      const says = when === 'before' ? /answer was lost .* does not show the image; inserting again/ : /answer was lost .* shows the image inserted/;
      expect(t.logs.some((l) => says.test(l.message))).toBe(true);
    });
  }
});

describe('task monitors', () => {
  it('202 + Location is followed to completion', async () => {
    const { bmc, t } = await lab({ asyncTasks: true, taskPolls: 2 });
    await redfishPowerModule.run(t.ctx, { state: 'off', ...FAST });
    await vmediaBootModule.run(t.ctx, { image: IMAGE, ...FAST });
    expect(bmc.state.powerState).toBe('Off');
    expect(bmc.state.get('/redfish/v1/Managers/1/VirtualMedia/2')).toMatchObject({ Image: IMAGE, Inserted: true });
  });

  it('a stuck task monitor fails after task_timeout with a clear message', async () => {
    const { t } = await lab({ faults: { stuckTaskMonitor: true } });
    await expect(vmediaBootModule.run(t.ctx, { image: IMAGE, ...FAST, task_timeout: 0.3 })).rejects.toThrow(/was accepted but its task did not finish: task monitor .* still running/);
  });
});

describe('vendor differences', () => {
  it('InsertMedia refusing the optional parameters is retried with Image only', async () => {
    const { bmc, t } = await lab({ faults: { strictInsertMedia: true } });
    await vmediaBootModule.run(t.ctx, { image: IMAGE, ...FAST });
    expect(bmc.state.get('/redfish/v1/Managers/1/VirtualMedia/2')).toMatchObject({ Image: IMAGE, Inserted: true });
    expect(t.logs.some((l) => /InsertMedia with optional parameters refused .*ActionParameterUnknown|invalid parameter Inserted/.test(l.message))).toBe(true);
  });
});

describe('read-back', () => {
  it('a BMC that ignores the boot override is caught', async () => {
    const { t } = await lab({ faults: { ignoreBootOverride: true } });
    await expect(vmediaBootModule.run(t.ctx, { image: IMAGE, ...FAST })).rejects.toThrow(/accepted boot override Cd .* but reads back "None"/);
    await expect(redfishBootDeviceModule.run(t.ctx, { device: 'pxe' })).rejects.toThrow(/reads back "None"/);
  });

  it('Continuous read back for a requested Once warns and goes on', async () => {
    const { t } = await lab({ faults: { onceReadsContinuous: true } });
    const r = await vmediaBootModule.run(t.ctx, { image: IMAGE, ...FAST });
    expect(r.boot_target).toBe('Cd');
    expect(t.warnings.join('\n')).toMatch(/reads back BootSourceOverrideEnabled Continuous for a requested Once/);
  });
});

describe('power decisions', () => {
  it('graceful_off escalates to ForceOff after force_after when the OS ignores it', async () => {
    const { bmc, t } = await lab({ faults: { ignoreGracefulShutdown: true } });
    const r = await redfishPowerModule.run(t.ctx, { state: 'graceful_off', force_after: 0.1, ...FAST });
    expect(r.power_state).toBe('Off');
    expect(bmc.state.resets).toEqual(['GracefulShutdown', 'ForceOff']);
    expect(t.warnings.join('\n')).toMatch(/GracefulShutdown had no effect after 0.1s; sending ForceOff/);
  });

  it('graceful_off without force_after times out with a hint', async () => {
    const { t } = await lab({ faults: { ignoreGracefulShutdown: true } });
    const err = (await redfishPowerModule.run(t.ctx, { state: 'graceful_off', ...FAST, timeout: 0.2 }).catch((e: unknown) => e)) as Error & { hint?: string };
    expect(err.message).toMatch(/PowerState did not become Off within 0.2s after GracefulShutdown/);
    expect(err.hint).toMatch(/force_after/);
  });

  it('waits through PoweringOn and reports progress', async () => {
    const { t } = await lab({ powerDelayMs: 150 });
    await redfishPowerModule.run(t.ctx, { state: 'off', ...FAST });
    expect(t.progress.some((p) => p.includes('waiting for PowerState Off'))).toBe(true);
  });

  it('iDRAC-style 409 on a redundant power change counts as done', async () => {
    const { bmc, t } = await lab({});
    const client = redfishClientFor(t.ctx, driverInfo(bmc, { redfish_verify_ca: false }));
    const action = await resetAction(client, await findSystem(client));
    expect(await postReset(client, action, 'On')).toBe(false); // the fake is On and answers 409
    expect(bmc.state.resets).toEqual([]);
    expect(await postReset(client, action, 'ForceOff')).toBe(true);
    expect(bmc.state.resets).toEqual(['ForceOff']);
  });
});
