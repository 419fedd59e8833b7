// The run's Redfish pool: one login per BMC and credentials, whatever the number of Systems
// driven on it; inventory hosts with different passwords on one BMC never share a client; the
// password is in no pool key, log or error.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redfishPowerModule } from '../../src/modules/redfish/redfish_power.js';
import { findSystem } from '../../src/redfish/discovery.js';
import { redfishClientFor } from '../../src/redfish/pool.js';
import { startFakeBmc } from '../../packages/lab/src/bmc/server.js';
import { scratchDirs } from '../helpers/scratch.js';
import { closeAfterEach, driverInfo, MOCKUPS, makeCtx, TestServices } from './redfish-helpers.js';

const scratch = scratchDirs();
const track = closeAfterEach();

/** A mockup whose BMC manages Systems 1, 2 and 3 (as a chassis manager or sushy-tools does). */
function threeSystems(): string {
  const dir = scratch('tsbm-mockup-');
  cpSync(`${MOCKUPS}/supermicro-sys510t-partial`, dir, { recursive: true });
  const coll = JSON.parse(readFileSync(join(dir, 'Systems/index.json'), 'utf8')) as { Members: unknown[] };
  for (const id of ['2', '3']) {
    const sys = JSON.parse(readFileSync(join(dir, 'Systems/1/index.json'), 'utf8')) as Record<string, unknown>;
    sys['@odata.id'] = `/redfish/v1/Systems/${id}`;
    sys.Id = id;
    sys.UUID = `00000000-0000-0000-0000-00000000000${id}`;
    cpSync(join(dir, 'Systems/1'), join(dir, `Systems/${id}`), { recursive: true });
    writeFileSync(join(dir, `Systems/${id}/index.json`), JSON.stringify(sys));
    coll.Members.push({ '@odata.id': `/redfish/v1/Systems/${id}` });
  }
  writeFileSync(join(dir, 'Systems/index.json'), JSON.stringify(coll));
  const first = JSON.parse(readFileSync(join(dir, 'Systems/1/index.json'), 'utf8')) as Record<string, unknown>;
  first.UUID = '00000000-0000-0000-0000-000000000001';
  writeFileSync(join(dir, 'Systems/1/index.json'), JSON.stringify(first));
  return dir;
}

describe('Redfish pool', () => {
  it('three Systems on one BMC: one login, one session, logged out once at the end', async () => {
    const bmc = await startFakeBmc({ mockupDir: threeSystems(), password: 'S3cret-pass!' });
    const services = new TestServices();
    const ts = ['1', '2', '3'].map((id) => makeCtx({ driver_info: driverInfo(bmc, { redfish_verify_ca: false, redfish_system_id: id }) }, { services }));
    track(bmc, ts[0]!);
    const uuids = await Promise.all(ts.map(async (t) => (await redfishPowerModule.run(t.ctx, { state: 'on' })).system_uuid));
    expect(uuids).toEqual(['1', '2', '3'].map((id) => `00000000-0000-0000-0000-00000000000${id}`));
    expect(bmc.requestCount('POST', '/SessionService/Sessions')).toBe(1);
    expect(bmc.requestCount('GET', '/redfish/v1/?')).toBe(0);
    expect(bmc.requests().filter((r) => r === 'GET /redfish/v1/')).toHaveLength(1); // the service root, once
    expect(bmc.openSessions()).toHaveLength(1);
    // a forgotten session: the Systems' clients log in again once between them
    bmc.expireSessions();
    await Promise.all(ts.map((t) => redfishPowerModule.run(t.ctx, { state: 'on' })));
    expect(bmc.requestCount('POST', '/SessionService/Sessions')).toBe(2);
    await services.close();
    expect(bmc.openSessions()).toEqual([]);
    expect(bmc.requestCount('DELETE')).toBe(1);
  });

  it('two hosts on one BMC and user with different passwords get their own clients (the wrong one fails)', async () => {
    const bmc = await startFakeBmc({ mockupDir: `${MOCKUPS}/supermicro-sys510t-partial`, password: 'S3cret-pass!' });
    const services = new TestServices();
    const good = makeCtx({ driver_info: driverInfo(bmc, { redfish_verify_ca: false }) }, { services });
    const bad = makeCtx({ driver_info: driverInfo(bmc, { redfish_verify_ca: false, redfish_password: 'Wr0ng-pass!' }) }, { services });
    track(bmc, good);
    await redfishPowerModule.run(good.ctx, { state: 'on' });
    // with the password out of the key, this reused the good host's client and "worked"
    const err = (await redfishPowerModule.run(bad.ctx, { state: 'on' }).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(/refused the credentials/);
    expect(`${err.message} ${(err as { hint?: string }).hint ?? ''} ${bad.emitted()} ${good.emitted()}`).not.toMatch(/Wr0ng-pass!|S3cret-pass!/);
    const goodClient = redfishClientFor(good.ctx, driverInfo(bmc, { redfish_verify_ca: false }));
    const badClient = redfishClientFor(bad.ctx, driverInfo(bmc, { redfish_verify_ca: false, redfish_password: 'Wr0ng-pass!' }));
    expect(badClient).not.toBe(goodClient);
    expect((await findSystem(goodClient)).path).toBe('/redfish/v1/Systems/1');
    // the pool's keys carry no password, in clear or base64
    const keys = [...(services as unknown as { items: Map<string, unknown> }).items.keys()].join('\n');
    expect(keys).not.toMatch(/Wr0ng-pass!|S3cret-pass!/);
    expect(keys).not.toContain(Buffer.from('S3cret-pass!').toString('base64'));
    await services.close();
  });
});
