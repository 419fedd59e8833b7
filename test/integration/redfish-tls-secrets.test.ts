// TLS verification choices, and that the password and session token never reach output.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { redfishBootDeviceModule } from '../../src/modules/redfish/redfish_boot_device.js';
import { redfishPowerModule } from '../../src/modules/redfish/redfish_power.js';
import { vmediaBootModule } from '../../src/modules/redfish/vmedia_boot.js';
import { MASK } from '../../src/output/redact.js';
import { type FakeBmc, type FakeBmcOptions, startFakeBmc } from '../../packages/lab/src/bmc/server.js';
import { driverInfo, MOCKUPS, makeCtx, type TestCtx } from './redfish-helpers.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();

const PASSWORD = 'S3cret-pass!';
const open: { bmc: FakeBmc; t?: TestCtx }[] = [];
afterEach(async () => {
  for (const { bmc, t } of open.splice(0).reverse()) {
    await t?.close();
    await bmc.close();
  }
});

async function bmcWith(opts: Partial<FakeBmcOptions> = {}): Promise<FakeBmc> {
  const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, password: PASSWORD, ...opts });
  open.push({ bmc });
  return bmc;
}

function ctxFor(bmc: FakeBmc, extra: Record<string, unknown>): TestCtx {
  const t = makeCtx({ driver_info: driverInfo(bmc, extra) });
  open.push({ bmc: { close: async () => {} } as FakeBmc, t });
  return t;
}

describe('TLS verification', () => {
  it('is on by default and refuses the self-signed BMC, saying how to pass its CA or opt out', async () => {
    const bmc = await bmcWith();
    const t = ctxFor(bmc, {});
    const err = (await redfishPowerModule.run(t.ctx, { state: 'on' }).catch((e: unknown) => e)) as Error & { hint?: string };
    expect(err.message).toMatch(/TLS certificate is not trusted/);
    expect(err.hint).toMatch(/redfish_verify_ca: \/path\/to\/bmc-ca\.pem/);
    expect(err.hint).toMatch(/redfish_verify_ca: false/);
    expect(bmc.requestCount()).toBe(0); // refused before any HTTP exchange, and not retried
  });

  it('accepts the BMC when its CA bundle is given', async () => {
    const bmc = await bmcWith();
    const ca = join(scratch('tsbm-tls-'), 'bmc-ca.pem');
    writeFileSync(ca, bmc.caCertPem);
    const t = ctxFor(bmc, { redfish_verify_ca: ca });
    expect((await redfishPowerModule.run(t.ctx, { state: 'on' })).power_state).toBe('On');
    expect(t.warnings).toEqual([]);
  });

  it('a CA bundle that is not this BMC\'s is refused', async () => {
    const bmc = await bmcWith();
    const other = await bmcWith({ host: '127.0.0.2' });
    const ca = join(scratch('tsbm-tls-'), 'other-ca.pem');
    writeFileSync(ca, other.caCertPem);
    const t = ctxFor(bmc, { redfish_verify_ca: ca });
    await expect(redfishPowerModule.run(t.ctx, { state: 'on' })).rejects.toThrow(/not trusted/);
  });

  it('an unreadable CA path is an options error', async () => {
    const bmc = await bmcWith();
    const t = ctxFor(bmc, { redfish_verify_ca: '/nonexistent/ca.pem' });
    await expect(redfishPowerModule.run(t.ctx, { state: 'on' })).rejects.toThrow(/cannot read the CA bundle \/nonexistent\/ca\.pem/);
  });

  it('false connects without verification and warns', async () => {
    const bmc = await bmcWith();
    const t = ctxFor(bmc, { redfish_verify_ca: false });
    expect((await redfishPowerModule.run(t.ctx, { state: 'on' })).power_state).toBe('On');
    expect(t.warnings.join('\n')).toMatch(/TLS certificate verification is off for BMC 127\.0\.0\.1:\d+/);
  });
});

describe('secrets', () => {
  for (const sessions of [true, false]) {
    it(`password and ${sessions ? 'session token' : 'Basic header'} appear in no log, warning, progress, result or error`, async () => {
      const bmc = await bmcWith({ sessions, powerDelayMs: 20, faults: { first503: 1 } });
      const t = ctxFor(bmc, { redfish_verify_ca: false });
      const outputs: unknown[] = [];
      const collect = async (p: Promise<unknown>) => outputs.push(await p.catch((e: unknown) => ({ error: e, text: String(e), json: JSON.stringify(e), hint: (e as { hint?: string }).hint })));
      await collect(redfishPowerModule.run(t.ctx, { state: 'off', poll_interval: 0.02, retry_max_delay: 0.01 }));
      const tokens = bmc.openSessions();
      expect(tokens.length).toBe(sessions ? 1 : 0);
      await collect(vmediaBootModule.run(t.ctx, { image: 'http://h/x.iso' }));
      await collect(redfishBootDeviceModule.run(t.ctx, { device: 'bios' }));
      await collect(redfishPowerModule.run(t.ctx, { state: 'nmi' })); // an error path: the fake has Nmi, so this passes
      await collect(vmediaBootModule.run(t.ctx, { image: '/no/such.iso' })); // an error
      // A wrong password error path through a second client.
      const bad = ctxFor(bmc, { redfish_verify_ca: false, redfish_password: 'Wr0ng-pass!' });
      await collect(redfishPowerModule.run(bad.ctx, { state: 'on' }));
      const everything = JSON.stringify(outputs) + outputs.map(String).join('') + t.emitted() + bad.emitted();
      const basic = Buffer.from(`admin:${PASSWORD}`).toString('base64');
      for (const secret of [PASSWORD, Buffer.from(PASSWORD).toString('base64'), basic, 'Wr0ng-pass!', ...tokens]) {
        expect(everything).not.toContain(secret);
      }
      // Registered for redaction everywhere else (renderers, journal) too.
      for (const s of [PASSWORD, ...tokens]) expect(t.redactor.redact(`x ${s} y`)).toBe(`x ${MASK} y`);
      expect(t.logs.length).toBeGreaterThan(0); // verbosity 1-3 logs were produced and checked
    });
  }
});
