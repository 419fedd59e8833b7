// The Redfish client and the three modules against the fake BMC serving every mockup tree,
// with session and Basic auth and with ETags required. Where a tree lacks something, the
// clear error is asserted.
import { describe, expect, it } from 'vitest';
import { redfishBootDeviceModule } from '../../src/modules/redfish/redfish_boot_device.js';
import { redfishPowerModule } from '../../src/modules/redfish/redfish_power.js';
import { vmediaBootModule } from '../../src/modules/redfish/vmedia_boot.js';
import { type FakeBmcOptions, startFakeBmc } from '../../packages/lab/src/bmc/server.js';
import { closeAfterEach, driverInfo, MOCKUPS, makeCtx } from './redfish-helpers.js';
import { writeFileSync, } from 'node:fs';
import { join } from 'node:path';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();

const IMAGE = 'http://10.0.0.1:8080/ramdisk.iso';
const FAST = { poll_interval: 0.02, timeout: 5 };

const track = closeAfterEach();

async function lab(tree: string, opts: Partial<FakeBmcOptions> = {}, check = false) {
  const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/${tree}`, password: 'S3cret-pass!', powerDelayMs: 30, ...opts });
  const ca = join(scratch('tsbm-rf-'), 'ca.pem');
  writeFileSync(ca, bmc.caCertPem);
  const t = makeCtx({ driver_info: driverInfo(bmc, { redfish_verify_ca: ca }) }, { check });
  track(bmc, t);
  return { bmc, t, ctx: t.ctx };
}

const AUTHS = [
  { name: 'session auth', opts: {} },
  { name: 'Basic auth (sessions refused)', opts: { sessions: false } },
  { name: 'session auth, ETags required', opts: { requireEtag: true } },
] as const;

for (const auth of AUTHS) {
  describe(`HPE iLO 5 tree, ${auth.name}`, () => {
    it('powers off and on, a redundant on is a no-op, and registers identity', async () => {
      const { bmc, ctx } = await lab('hpe-ilo5-dl325-gen10plus', auth.opts);
      const off = await redfishPowerModule.run(ctx, { state: 'off', ...FAST });
      expect(off).toMatchObject({ changed: true, power_state: 'Off', reset_type: 'ForceOff', system_uuid: '36383150-3630-584d-5130-313930323042' });
      expect(off.mac_addresses).toContain('14:02:ec:d9:3a:a0');
      const on = await redfishPowerModule.run(ctx, { state: 'on', ...FAST });
      expect(on).toMatchObject({ changed: true, power_state: 'On' });
      const again = await redfishPowerModule.run(ctx, { state: 'on', ...FAST });
      expect(again.changed).toBe(false);
      expect(bmc.state.resets).toEqual(['ForceOff', 'On']);
      // The NICs are listed once per run and BMC, not after every power change.
      expect(again.mac_addresses).toEqual(off.mac_addresses);
      const nicGets = bmc.requestCount('GET', '/EthernetInterfaces');
      expect(nicGets).toBeGreaterThan(0);
      await redfishPowerModule.run(ctx, { state: 'on', ...FAST });
      expect(bmc.requestCount('GET', '/EthernetInterfaces')).toBe(nicGets);
    });

    it('vmedia_boot inserts into the Manager CD slot, sets Cd/Once, is idempotent, and ejects', async () => {
      const { bmc, ctx } = await lab('hpe-ilo5-dl325-gen10plus', auth.opts);
      const r = await vmediaBootModule.run(ctx, { image: IMAGE });
      expect(r).toMatchObject({ changed: true, media_slot: '/redfish/v1/Managers/1/VirtualMedia/2', boot_target: 'Cd' });
      expect(bmc.state.get('/redfish/v1/Managers/1/VirtualMedia/2')).toMatchObject({ Image: IMAGE, Inserted: true });
      expect(bmc.state.boot).toMatchObject({ BootSourceOverrideTarget: 'Cd', BootSourceOverrideEnabled: 'Once', BootSourceOverrideMode: 'UEFI' });
      // The slot is found once per run; later tasks read only that slot.
      const before = bmc.requestCount('GET', '/Managers/1/VirtualMedia/1');
      expect((await vmediaBootModule.run(ctx, { image: IMAGE })).changed).toBe(false);
      expect(bmc.requestCount('GET', '/Managers/1/VirtualMedia/1')).toBe(before);
      const ej = await vmediaBootModule.run(ctx, { state: 'ejected' });
      expect(ej.changed).toBe(true);
      expect(bmc.state.get('/redfish/v1/Managers/1/VirtualMedia/2')).toMatchObject({ Image: '', Inserted: false });
      expect((await vmediaBootModule.run(ctx, { state: 'ejected' })).changed).toBe(false);
    });

    it('redfish_boot_device sets disk persistently and reads it back', async () => {
      const { bmc, ctx } = await lab('hpe-ilo5-dl325-gen10plus', auth.opts);
      const r = await redfishBootDeviceModule.run(ctx, { device: 'disk', persistent: true });
      expect(r).toMatchObject({ changed: true, boot_target: 'Hdd', boot_enabled: 'Continuous' });
      expect(bmc.state.boot).toMatchObject({ BootSourceOverrideTarget: 'Hdd', BootSourceOverrideEnabled: 'Continuous' });
      expect((await redfishBootDeviceModule.run(ctx, { device: 'disk', persistent: true })).changed).toBe(false);
    });

    it('logs out of its session when the run ends', async () => {
      const { bmc, t } = await lab('hpe-ilo5-dl325-gen10plus', auth.opts);
      const before = bmc.openSessions().length;
      await redfishPowerModule.run(t.ctx, { state: 'on', ...FAST });
      expect(bmc.openSessions().length).toBe(before + ('sessions' in auth.opts ? 0 : 1));
      await t.close();
      expect(bmc.openSessions().length).toBe(before);
    });
  });

  describe(`other trees, ${auth.name}`, () => {
    it('OpenBMC: ResetType from ActionInfo; no VirtualMedia is a clear error; boot pxe works', async () => {
      const { bmc, ctx } = await lab('openbmc-bmcweb-stock', auth.opts);
      expect(await redfishPowerModule.run(ctx, { state: 'cycle', ...FAST })).toMatchObject({ changed: true, power_state: 'On', reset_type: 'On' });
      expect(await redfishPowerModule.run(ctx, { state: 'cycle', ...FAST })).toMatchObject({ changed: true, power_state: 'On', reset_type: 'PowerCycle' });
      await expect(vmediaBootModule.run(ctx, { image: IMAGE })).rejects.toThrow(/offers no CD\/DVD virtual media.*no VirtualMedia link/);
      await redfishBootDeviceModule.run(ctx, { device: 'pxe', mode: 'legacy' });
      expect(bmc.state.boot).toMatchObject({ BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Once', BootSourceOverrideMode: 'Legacy' });
    });

    it('DMTF rackmount: media without actions is replaced through PATCH', async () => {
      const { bmc, ctx } = await lab('dmtf-public-rackmount1', auth.opts);
      const r = await vmediaBootModule.run(ctx, { image: IMAGE });
      expect(r.media_slot).toBe('/redfish/v1/Systems/437XR1138R2/VirtualMedia/CD1');
      expect(bmc.state.get('/redfish/v1/Systems/437XR1138R2/VirtualMedia/CD1')).toMatchObject({ Image: IMAGE, Inserted: true });
      expect(bmc.state.boot).toMatchObject({ BootSourceOverrideTarget: 'Cd', BootSourceOverrideEnabled: 'Once' });
      expect(bmc.requestCount('PATCH')).toBeGreaterThanOrEqual(3); // eject, insert, boot
      expect(await redfishPowerModule.run(ctx, { state: 'graceful_off', ...FAST })).toMatchObject({ reset_type: 'GracefulShutdown', power_state: 'Off' });
    });

    it('Dell iDRAC partial: no Reset action is a clear error; media under the System with TransferProtocolType', async () => {
      const { bmc, ctx } = await lab('dell-idrac9-partial', auth.opts);
      await expect(redfishPowerModule.run(ctx, { state: 'on', ...FAST })).rejects.toThrow(/offers no #ComputerSystem\.Reset action/);
      const r = await vmediaBootModule.run(ctx, { image: IMAGE });
      expect(r.media_slot).toBe('/redfish/v1/Systems/System.Embedded.1/VirtualMedia/2');
      expect(bmc.state.get(r.media_slot as string)).toMatchObject({ Image: IMAGE, Inserted: true, TransferProtocolType: 'HTTP' });
      expect(bmc.state.boot).toMatchObject({ BootSourceOverrideTarget: 'Cd', BootSourceOverrideMode: 'UEFI' }); // Legacy → UEFI
    });

    it('Supermicro partial: repaired ResetType list; VirtualMedia link to a missing collection is a clear error', async () => {
      const { bmc, ctx } = await lab('supermicro-sys510t-partial', auth.opts);
      expect(await redfishPowerModule.run(ctx, { state: 'graceful_off', ...FAST })).toMatchObject({ reset_type: 'GracefulShutdown', power_state: 'Off' });
      await expect(vmediaBootModule.run(ctx, { image: IMAGE })).rejects.toThrow(/Managers\/1\/VirtualMedia does not exist \(404\)/);
      const r = await redfishBootDeviceModule.run(ctx, { device: 'cd' });
      expect(r).toMatchObject({ changed: true, boot_target: 'Cd', boot_enabled: 'Once' });
      expect(bmc.state.resets).toEqual(['GracefulShutdown']);
    });
  });
}

describe('check mode', () => {
  it('reports what would change and changes nothing', async () => {
    const { bmc, ctx } = await lab('hpe-ilo5-dl325-gen10plus', {}, true);
    expect(await redfishPowerModule.run(ctx, { state: 'off', ...FAST })).toMatchObject({ changed: true, reset_type: 'ForceOff' });
    expect(await vmediaBootModule.run(ctx, { image: IMAGE })).toMatchObject({ changed: true });
    expect(await redfishBootDeviceModule.run(ctx, { device: 'pxe' })).toMatchObject({ changed: true });
    expect(bmc.state.powerState).toBe('On');
    expect(bmc.state.resets).toEqual([]);
    expect(bmc.requestCount('PATCH') + bmc.requestCount('POST') - 1).toBe(0); // only the session login POST
  });
});

describe('system selection', () => {
  it('an unknown redfish_system_id lists the choices', async () => {
    const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, password: 'S3cret-pass!' });
    const t = makeCtx({ driver_info: driverInfo(bmc, { redfish_verify_ca: false, redfish_system_id: 'nope' }) });
    track(bmc, t);
    await expect(redfishPowerModule.run(t.ctx, { state: 'on' })).rejects.toThrow(/has no System "nope"; it has: \/redfish\/v1\/Systems\/1/);
  });

  it('a wrong password is refused with a hint about the credentials', async () => {
    const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, password: 'other' });
    const t = makeCtx({ driver_info: driverInfo(bmc, { redfish_verify_ca: false }) });
    track(bmc, t);
    const err = await redfishPowerModule.run(t.ctx, { state: 'on' }).catch((e: unknown) => e);
    expect(String((err as Error).message)).toMatch(/refused the credentials \(HTTP 401\)/);
    expect((err as { hint?: string }).hint).toMatch(/redfish_username and redfish_password/);
  });
});
