// What a Redfish step costs in requests: no read-back where the BMC's own answer already shows
// the resource (a PATCH answered with it), no read of the System where only the media slot
// matters, no PATCH when the boot override is already as wanted; and PowerState polling that
// looks at a change of a kind this BMC made before only shortly before it is due. A BMC that
// ignores a change is still caught, from its own answer.
import { describe, expect, it } from 'vitest';
import { redfishBootDeviceModule } from '../../src/modules/redfish/redfish_boot_device.js';
import { redfishPowerModule } from '../../src/modules/redfish/redfish_power.js';
import { vmediaBootModule } from '../../src/modules/redfish/vmedia_boot.js';
import { startFakeBmc } from '../../packages/lab/src/bmc/server.js';
import type { BmcFaults } from '../../packages/lab/src/bmc/faults.js';
import { closeAfterEach, driverInfo, MOCKUPS, makeCtx } from './redfish-helpers.js';

const track = closeAfterEach();

async function lab(tree: string, opts: { powerDelayMs?: number; faults?: BmcFaults } = {}) {
  const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/${tree}`, password: 'S3cret-pass!', ...opts });
  const t = makeCtx({ driver_info: driverInfo(bmc, { redfish_verify_ca: false }) });
  track(bmc, t);
  return { bmc, t };
}

/** The requests made from `from` on, as `METHOD /path` (queries dropped). */
const since = (bmc: { requests(): string[] }, from: number) => bmc.requests().slice(from).map((r) => r.split('?')[0]!);

describe('Redfish round trips', () => {
  it('a PATCH answered with the resource is its own read-back (media and boot override, DMTF tree)', async () => {
    const { bmc, t } = await lab('dmtf-public-rackmount1');
    await redfishPowerModule.run(t.ctx, { state: 'off' }); // discovery and login out of the way
    const n = bmc.requests().length;
    await vmediaBootModule.run(t.ctx, { image: 'http://h/a.iso' });
    const reqs = since(bmc, n);
    // the slot (eject what the tree had in it, insert), then Boot: nothing read in between
    expect(reqs.filter((r) => r.startsWith('PATCH'))).toEqual([
      'PATCH /redfish/v1/Systems/437XR1138R2/VirtualMedia/CD1',
      'PATCH /redfish/v1/Systems/437XR1138R2/VirtualMedia/CD1',
      'PATCH /redfish/v1/Systems/437XR1138R2',
    ]);
    const firstPatch = reqs.findIndex((r) => r.startsWith('PATCH'));
    expect(reqs.slice(firstPatch).filter((r) => r.startsWith('GET'))).toEqual([]);
    expect(bmc.state.boot).toMatchObject({ BootSourceOverrideTarget: 'Cd', BootSourceOverrideEnabled: 'Once' });
  });

  it('ejecting reads only the slot, not the System', async () => {
    const { bmc, t } = await lab('hpe-ilo5-dl325-gen10plus');
    await vmediaBootModule.run(t.ctx, { image: 'http://h/a.iso' });
    const n = bmc.requests().length;
    await vmediaBootModule.run(t.ctx, { state: 'ejected' });
    expect(since(bmc, n).some((r) => r.includes('/Systems/'))).toBe(false);
    expect(bmc.state.get('/redfish/v1/Managers/1/VirtualMedia/2')).toMatchObject({ Inserted: false });
  });

  it('a boot override already as wanted costs one read; a change, the PATCH and no read after it', async () => {
    const { bmc, t } = await lab('hpe-ilo5-dl325-gen10plus');
    await redfishBootDeviceModule.run(t.ctx, { device: 'disk', persistent: true });
    const n = bmc.requests().length;
    const again = await redfishBootDeviceModule.run(t.ctx, { device: 'disk', persistent: true });
    expect(again.changed).toBe(false);
    expect(since(bmc, n)).toEqual(['GET /redfish/v1/Systems/1']);
    const m = bmc.requests().length;
    await redfishBootDeviceModule.run(t.ctx, { device: 'pxe' });
    expect(since(bmc, m)).toEqual(['GET /redfish/v1/Systems/1', 'PATCH /redfish/v1/Systems/1']);
  });

  it('a BMC that ignores the override is still caught, from the PATCH answer alone', async () => {
    const { t } = await lab('hpe-ilo5-dl325-gen10plus', { faults: { ignoreBootOverride: true } });
    const err = (await redfishBootDeviceModule.run(t.ctx, { device: 'pxe' }).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/accepted boot override Pxe .* but reads back/);
  });

  it('the second power change of a kind on this BMC is looked at shortly before it is due', async () => {
    const { bmc, t } = await lab('hpe-ilo5-dl325-gen10plus', { powerDelayMs: 1500 });
    const reads = async (state: 'on' | 'off') => {
      const n = bmc.requests().length;
      await redfishPowerModule.run(t.ctx, { state });
      return since(bmc, n).filter((r) => r === 'GET /redfish/v1/Systems/1').length;
    };
    await reads('off');
    const firstOn = await reads('on');
    await reads('off');
    const secondOn = await reads('on');
    // first: every 0.25 s for 1.5 s; second: once at 80% of what the first took, then soon after
    expect(firstOn).toBeGreaterThanOrEqual(5);
    expect(secondOn).toBeLessThanOrEqual(4);
    expect(secondOn).toBeLessThan(firstOn);
  });
});
