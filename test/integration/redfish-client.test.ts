// Client behaviour that spans requests: re-login after the BMC drops the session, one request
// at a time per BMC, System selection on a BMC with several Systems.
import { getEventListeners } from 'node:events';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redfishPowerModule } from '../../src/modules/redfish/redfish_power.js';
import { vmediaBootModule } from '../../src/modules/redfish/vmedia_boot.js';
import { findSystem } from '../../src/redfish/discovery.js';
import { redfishClientFor } from '../../src/redfish/pool.js';
import { Transport } from '../../src/redfish/transport.js';
import { startFakeBmc } from '../../packages/lab/src/bmc/server.js';
import { closeAfterEach, driverInfo, MOCKUPS, makeCtx } from './redfish-helpers.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();

const track = closeAfterEach();

async function lab(dir = `${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, extra: Record<string, unknown> = {}, latencyMs = 0) {
  const bmc = await startFakeBmc({ mockupDir: dir, password: 'S3cret-pass!', faults: { latencyMs } });
  const t = makeCtx({ driver_info: driverInfo(bmc, { redfish_verify_ca: false, ...extra }) });
  track(bmc, t);
  return { bmc, t };
}

describe('Redfish client', () => {
  it('logs in again once when the BMC forgot the session, and logs out at the end', async () => {
    const { bmc, t } = await lab();
    await redfishPowerModule.run(t.ctx, { state: 'on' });
    const first = bmc.openSessions();
    expect(first).toHaveLength(1);
    bmc.expireSessions();
    await redfishPowerModule.run(t.ctx, { state: 'on' });
    expect(t.logs.some((l) => /answered 401 .*logging in again/.test(l.message))).toBe(true);
    const second = bmc.openSessions();
    expect(second).toHaveLength(1);
    expect(second[0]).not.toBe(first[0]);
    await t.close();
    expect(bmc.openSessions()).toEqual([]);
  });

  it('sends one request at a time to a BMC even when tasks run in parallel', async () => {
    const { bmc, t } = await lab(undefined, {}, 20);
    const client = redfishClientFor(t.ctx, driverInfo(bmc, { redfish_verify_ca: false }));
    await client.connect();
    await Promise.all(Array.from({ length: 6 }, () => client.get('/redfish/v1/Systems/1')));
    await Promise.all([redfishPowerModule.run(t.ctx, { state: 'on' }), redfishPowerModule.run(t.ctx, { state: 'on' })]);
    expect(bmc.requestCount()).toBeGreaterThan(8);
    expect(bmc.maxConcurrent()).toBe(1);
  });

  it('a BMC with several Systems needs redfish_system_id; the error lists them; the id selects', async () => {
    const dir = scratch('tsbm-mockup-');
    cpSync(`${MOCKUPS}/supermicro-sys510t-partial`, dir, { recursive: true });
    const sys2 = JSON.parse(readFileSync(join(dir, 'Systems/1/index.json'), 'utf8')) as Record<string, unknown>;
    sys2['@odata.id'] = '/redfish/v1/Systems/2';
    sys2.Id = '2';
    sys2.UUID = '00000000-0000-0000-0000-000000000002';
    cpSync(join(dir, 'Systems/1'), join(dir, 'Systems/2'), { recursive: true });
    writeFileSync(join(dir, 'Systems/2/index.json'), JSON.stringify(sys2));
    const coll = JSON.parse(readFileSync(join(dir, 'Systems/index.json'), 'utf8')) as { Members: unknown[] };
    coll.Members.push({ '@odata.id': '/redfish/v1/Systems/2' });
    writeFileSync(join(dir, 'Systems/index.json'), JSON.stringify(coll));

    const { t } = await lab(dir);
    const err = (await redfishPowerModule.run(t.ctx, { state: 'on' }).catch((e: unknown) => e)) as Error & { hint?: string };
    expect(err.message).toMatch(/manages several Systems: \/redfish\/v1\/Systems\/1, \/redfish\/v1\/Systems\/2/);
    expect(err.hint).toMatch(/redfish_system_id/);
    const { bmc: bmc2, t: t2 } = await lab(dir, { redfish_system_id: '2' });
    const client = redfishClientFor(t2.ctx, driverInfo(bmc2, { redfish_verify_ca: false, redfish_system_id: '2' }));
    expect((await findSystem(client)).body.UUID).toBe('00000000-0000-0000-0000-000000000002');
    expect((await redfishPowerModule.run(t2.ctx, { state: 'on' })).system_uuid).toBe('00000000-0000-0000-0000-000000000002');
  });
});

describe('vendor differences', () => {
  it('HPE OEM virtual media actions are used where the standard ones are missing', async () => {
    const dir = scratch('tsbm-mockup-');
    cpSync(`${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, dir, { recursive: true });
    const file = join(dir, 'Managers/1/VirtualMedia/2/index.json');
    const slot = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    delete slot.Actions; // as on iLO 4 / early iLO 5 firmware
    writeFileSync(file, JSON.stringify(slot));
    const { bmc, t } = await lab(dir);
    await vmediaBootModule.run(t.ctx, { image: 'http://h/a.iso' });
    expect(bmc.state.get('/redfish/v1/Managers/1/VirtualMedia/2')).toMatchObject({ Image: 'http://h/a.iso', Inserted: true });
    expect(bmc.requestCount('PATCH')).toBe(1); // only the boot override: media went through the OEM action
    await vmediaBootModule.run(t.ctx, { state: 'ejected' });
    expect(bmc.state.get('/redfish/v1/Managers/1/VirtualMedia/2')).toMatchObject({ Image: '', Inserted: false });
  });

  it('a service root without a session link means Basic auth, without guessing a path', async () => {
    const dir = scratch('tsbm-mockup-');
    cpSync(`${MOCKUPS}/supermicro-sys510t-partial`, dir, { recursive: true });
    const root = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as Record<string, unknown>;
    delete root.Links;
    writeFileSync(join(dir, 'index.json'), JSON.stringify(root));
    const { bmc, t } = await lab(dir);
    await redfishPowerModule.run(t.ctx, { state: 'on' });
    expect(bmc.requestCount('POST')).toBe(0);
    expect(t.logs.map((l) => l.message)).toContain(`BMC ${bmc.url.replace('https://', '')} links no session collection; using Basic auth`);
  });
});

describe('system CAs', () => {
  it('redfish_verify_ca: true trusts a CA installed in the system bundle (SSL_CERT_FILE)', async () => {
    const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/supermicro-sys510t-partial`, password: 'S3cret-pass!' });
    const bundle = join(scratch('tsbm-ca-'), 'ca-certificates.crt');
    writeFileSync(bundle, bmc.caCertPem);
    const saved = process.env.SSL_CERT_FILE;
    process.env.SSL_CERT_FILE = bundle; // read once per process, on the first verifying client
    const t = makeCtx({ driver_info: driverInfo(bmc, { redfish_verify_ca: true }) });
    track(bmc, t);
    try {
      expect((await redfishPowerModule.run(t.ctx, { state: 'on' })).power_state).toBe('On');
    } finally {
      if (saved === undefined) delete process.env.SSL_CERT_FILE;
      else process.env.SSL_CERT_FILE = saved;
    }
  });
});

describe('transport', () => {
  it('keeps one BMC connection across a pause past Node\'s 5 s keep-alive default (and its 1 s grace)', async () => {
    const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, password: 'S3cret-pass!' });
    const endpoint = { baseUrl: bmc.url, bmc: 'bmc', username: undefined, password: undefined, systemId: undefined, verifyCa: false };
    const t = new Transport(endpoint);
    try {
      expect((await t.request('GET', '/redfish/v1')).status).toBe(200);
      await new Promise((r) => setTimeout(r, 7000));
      expect((await t.request('GET', '/redfish/v1')).status).toBe(200);
      expect(bmc.connectionCount()).toBe(1);
    } finally {
      t.close();
      await bmc.close();
    }
  }, 15_000);

  it("the run's abort stops a request in flight at once, without a retry", async () => {
    const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, password: 'S3cret-pass!', faults: { latencyMs: 3000 } });
    const ac = new AbortController();
    const endpoint = { baseUrl: bmc.url, bmc: 'bmc', username: undefined, password: undefined, systemId: undefined, verifyCa: false };
    const t = new Transport(endpoint, { signal: ac.signal, retry: { retries: 3, baseDelayMs: 10, maxDelayMs: 10 } });
    try {
      setTimeout(() => ac.abort(), 100);
      const e = (await t.request('GET', '/redfish/v1').catch((x: unknown) => x)) as Error;
      expect(e.message).toMatch(/aborted/);
      expect(bmc.requestCount()).toBe(1);
    } finally {
      t.close();
      await bmc.close();
    }
  });

  // How close to the setting it fires (undici ticks its own in half seconds) is bench/timeouts.ts.
  it('the request timeout fires with its own message (not undici\'s)', async () => {
    const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, password: 'S3cret-pass!', faults: { latencyMs: 2000 } });
    const endpoint = { baseUrl: bmc.url, bmc: 'bmc', username: undefined, password: undefined, systemId: undefined, verifyCa: false };
    const t = new Transport(endpoint, { timeoutMs: 120, retry: { retries: 0 } });
    try {
      const e = (await t.request('GET', '/redfish/v1').catch((x: unknown) => x)) as Error;
      expect(e.message).toMatch(/no answer within 120 ms/);
    } finally {
      t.close();
      await bmc.close();
    }
  });

  it("leaves no listener on the run's abort signal once a request is done", async () => {
    const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, password: 'S3cret-pass!' });
    const ac = new AbortController();
    const endpoint = { baseUrl: bmc.url, bmc: 'bmc', username: undefined, password: undefined, systemId: undefined, verifyCa: false };
    const t = new Transport(endpoint, { signal: ac.signal });
    try {
      for (let i = 0; i < 5; i++) expect((await t.request('GET', '/redfish/v1')).status).toBe(200);
      await new Promise((r) => setImmediate(r));
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    } finally {
      t.close();
      await bmc.close();
    }
  });
});
