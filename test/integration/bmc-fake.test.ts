// The fake BMC's own behaviour over HTTPS, independent of tsbm's client: auth, sessions,
// PATCH validation, ETags, power timeline with hooks, 409s and ExtendedInfo errors, $expand.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeBmc, type FakeBmcOptions, startFakeBmc } from '../../packages/lab/src/bmc/server.js';
import { scratchDirs } from '../helpers/scratch.js';
import { MOCKUPS } from './redfish-helpers.js';

const scratch = scratchDirs();

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

const BASIC = `Basic ${Buffer.from('admin:pw').toString('base64')}`;

function call(bmc: FakeBmc, method: string, path: string, body?: unknown, headers: Record<string, string> = { Authorization: BASIC }): Promise<Res> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(`${bmc.url}${path}`, { method, ca: bmc.caCertPem, agent: false, headers: { ...(payload ? { 'Content-Type': 'application/json' } : {}), ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

function messageIds(r: Res): string[] {
  const info = (r.body.error as Record<string, unknown>)['@Message.ExtendedInfo'] as { MessageId: string }[];
  return info.map((m) => m.MessageId);
}

const open: FakeBmc[] = [];
afterEach(async () => {
  for (const b of open.splice(0)) await b.close();
});
async function fake(tree: string, opts: Partial<FakeBmcOptions> = {}): Promise<FakeBmc> {
  const b = await startFakeBmc({ mockupDir: `${MOCKUPS}/${tree}`, password: 'pw', ...opts });
  open.push(b);
  return b;
}

describe('fake BMC', () => {
  it('serves the service root without auth and refuses resources without credentials', async () => {
    const bmc = await fake('hpe-ilo5-dl325-gen10plus');
    expect((await call(bmc, 'GET', '/redfish/v1/', undefined, {})).status).toBe(200);
    const r = await call(bmc, 'GET', '/redfish/v1/Systems/1', undefined, {});
    expect(r.status).toBe(401);
    expect(messageIds(r)).toEqual(['Base.1.8.InsufficientPrivilege']);
    expect((await call(bmc, 'GET', '/redfish/v1/Systems/1', undefined, { Authorization: `Basic ${Buffer.from('admin:no').toString('base64')}` })).status).toBe(401);
  });

  it('opens, honours and deletes sessions, creating the collection a tree lacks', async () => {
    const bmc = await fake('dell-idrac9-partial');
    const login = await call(bmc, 'POST', '/redfish/v1/SessionService/Sessions', { UserName: 'admin', Password: 'pw' }, {});
    expect(login.status).toBe(201);
    const token = login.headers['x-auth-token'] as string;
    const location = login.headers.location as string;
    expect(location).toMatch(/^\/redfish\/v1\/SessionService\/Sessions\/[0-9a-f]+$/);
    expect((await call(bmc, 'GET', '/redfish/v1/Systems/System.Embedded.1', undefined, { 'X-Auth-Token': token })).status).toBe(200);
    expect((await call(bmc, 'DELETE', location, undefined, { 'X-Auth-Token': token })).status).toBe(204);
    expect((await call(bmc, 'GET', '/redfish/v1/Systems/System.Embedded.1', undefined, { 'X-Auth-Token': token })).status).toBe(401);
    expect((await call(bmc, 'POST', '/redfish/v1/SessionService/Sessions', { UserName: 'admin', Password: 'bad' }, {})).status).toBe(401);
  });

  it('refuses read-only properties and values outside the allowed list with ExtendedInfo', async () => {
    const bmc = await fake('hpe-ilo5-dl325-gen10plus');
    const ro = await call(bmc, 'PATCH', '/redfish/v1/Systems/1', { PowerState: 'Off' });
    expect(ro.status).toBe(400);
    expect(messageIds(ro)).toEqual(['Base.1.8.PropertyNotWritable']);
    const bad = await call(bmc, 'PATCH', '/redfish/v1/Systems/1', { Boot: { BootSourceOverrideTarget: 'Floppy' } });
    expect(bad.status).toBe(400);
    expect(messageIds(bad)).toEqual(['Base.1.8.PropertyValueNotInList']);
    const ok = await call(bmc, 'PATCH', '/redfish/v1/Systems/1', { Boot: { BootSourceOverrideTarget: 'Pxe', BootSourceOverrideEnabled: 'Once' } });
    expect(ok.status).toBe(200);
    expect(bmc.state.boot.BootSourceOverrideTarget).toBe('Pxe');
  });

  it('generates ETags and enforces If-Match (412 stale or missing when required)', async () => {
    const bmc = await fake('supermicro-sys510t-partial', { requireEtag: true });
    const r = await call(bmc, 'GET', '/redfish/v1/Systems/1');
    const etag = r.headers.etag as string;
    expect(etag).toMatch(/^W\/"[0-9a-f]+"$/);
    expect(r.body['@odata.etag']).toBe(etag);
    const patch = { Boot: { BootSourceOverrideTarget: 'UsbCd', BootSourceOverrideEnabled: 'Once' } };
    expect((await call(bmc, 'PATCH', '/redfish/v1/Systems/1', patch)).status).toBe(412);
    expect((await call(bmc, 'PATCH', '/redfish/v1/Systems/1', patch, { Authorization: BASIC, 'If-Match': 'W/"stale"' })).status).toBe(412);
    const ok = await call(bmc, 'PATCH', '/redfish/v1/Systems/1', patch, { Authorization: BASIC, 'If-Match': etag });
    expect(ok.status).toBe(200);
    expect(ok.headers.etag).not.toBe(etag);
    // The old tag is now stale.
    expect((await call(bmc, 'PATCH', '/redfish/v1/Systems/1', patch, { Authorization: BASIC, 'If-Match': etag })).status).toBe(412);
  });

  it('moves PowerState through PoweringOff/PoweringOn after the delay, calls hooks, and 409s redundant requests', async () => {
    const power: string[] = [];
    const bmc = await fake('hpe-ilo5-dl325-gen10plus', { powerDelayMs: 400, hooks: { onPower: (s) => power.push(s) } });
    const target = '/redfish/v1/Systems/1/Actions/ComputerSystem.Reset';
    const again = await call(bmc, 'POST', target, { ResetType: 'On' });
    expect(again.status).toBe(409);
    expect(messageIds(again)).toEqual(['Base.1.8.ResourceInStandby']);
    expect((await call(bmc, 'POST', target, { ResetType: 'ForceOff' })).status).toBe(204);
    expect(bmc.state.powerState).toBe('PoweringOff');
    await new Promise((r) => setTimeout(r, 700));
    expect(bmc.state.powerState).toBe('Off');
    expect((await call(bmc, 'POST', target, { ResetType: 'GracefulShutdown' })).status).toBe(409);
    expect((await call(bmc, 'POST', target, { ResetType: 'PowerCycle' })).status).toBe(400); // not in iLO's list
    expect((await call(bmc, 'POST', target, {})).status).toBe(400);
    expect((await call(bmc, 'POST', target, { ResetType: 'On' })).status).toBe(204);
    await new Promise((r) => setTimeout(r, 700));
    expect(power).toEqual(['Off', 'On']);
  });

  it('inserts and ejects virtual media through standard and HPE OEM actions, refusing a double insert', async () => {
    const bmc = await fake('hpe-ilo5-dl325-gen10plus');
    const base = '/redfish/v1/Managers/1/VirtualMedia/2/Actions';
    expect((await call(bmc, 'POST', `${base}/VirtualMedia.InsertMedia`, {})).status).toBe(400);
    expect((await call(bmc, 'POST', `${base}/VirtualMedia.InsertMedia`, { Image: 'http://h/a.iso' })).status).toBe(204);
    expect(bmc.state.get('/redfish/v1/Managers/1/VirtualMedia/2')).toMatchObject({ Image: 'http://h/a.iso', Inserted: true, ConnectedVia: 'URI' });
    expect((await call(bmc, 'POST', `${base}/VirtualMedia.InsertMedia`, { Image: 'http://h/b.iso' })).status).toBe(409);
    expect((await call(bmc, 'POST', `${base}/Oem/Hpe/HpeiLOVirtualMedia.EjectVirtualMedia`, {})).status).toBe(204);
    expect(bmc.state.get('/redfish/v1/Managers/1/VirtualMedia/2')).toMatchObject({ Image: '', Inserted: false });
    expect((await call(bmc, 'POST', `${base}/Oem/Hpe/HpeiLOVirtualMedia.InsertVirtualMedia`, { Image: 'http://h/b.iso' })).status).toBe(204);
    expect(bmc.state.get('/redfish/v1/Managers/1/VirtualMedia/2')?.Image).toBe('http://h/b.iso');
  });

  it('validates TransferProtocolType where the BMC lists it, and 404s unknown paths', async () => {
    const bmc = await fake('dell-idrac9-partial');
    const insert = '/redfish/v1/Systems/System.Embedded.1/VirtualMedia/2/Actions/VirtualMedia.InsertMedia';
    expect((await call(bmc, 'POST', insert, { Image: 'ftp://h/a.iso', TransferProtocolType: 'FTP' })).status).toBe(400);
    expect((await call(bmc, 'POST', insert, { Image: 'http://h/a.iso', TransferProtocolType: 'HTTP' })).status).toBe(204);
    const nf = await call(bmc, 'GET', '/redfish/v1/Chassis/System.Embedded.1');
    expect(nf.status).toBe(404);
    expect(messageIds(nf)).toEqual(['Base.1.8.ResourceMissingAtURI']);
  });

  describe('$expand', () => {
    const nics = '/redfish/v1/Systems/1/EthernetInterfaces';
    const ids = (r: Res) => (r.body.Members as Record<string, unknown>[]).map((m) => m['@odata.id']);

    it('expands a collection\'s Members in place, one level, where the root advertises it (iLO 5: `.` only, MaxLevels 1)', async () => {
      const bmc = await fake('hpe-ilo5-dl325-gen10plus');
      const plain = await call(bmc, 'GET', nics);
      expect(plain.body.Members).toEqual([1, 2, 3, 4].map((i) => ({ '@odata.id': `${nics}/${i}` })));
      for (const q of ['$expand=.($levels=1)', '%24expand=.%28%24levels%3D1%29', '$expand=.']) {
        const r = await call(bmc, 'GET', `${nics}?${q}`);
        expect(r.status, q).toBe(200);
        expect(ids(r)).toEqual(ids(plain));
        const first = (r.body.Members as Record<string, unknown>[])[0];
        expect(first).toMatchObject({ '@odata.id': `${nics}/1`, '@odata.type': '#EthernetInterface.v1_4_1.EthernetInterface', MACAddress: '94:40:c9:5c:86:bc' });
        // Each member carries its own current tag, the one a GET of it sends.
        const one = await call(bmc, 'GET', `${nics}/1`);
        expect(first?.['@odata.etag']).toBe(one.headers.etag);
        expect(r.body['Members@odata.count']).toBe(4);
      }
      // The tree is not changed by expanding it, and the query does not disturb path lookup.
      expect((await call(bmc, 'GET', nics)).body.Members).toEqual(plain.body.Members);
      expect((await call(bmc, 'GET', '/redfish/v1/Systems/1/?$expand=.')).body.Id).toBe('1');
      expect((await call(bmc, 'GET', '/redfish/v1/Systems/1/Nope?$expand=.')).status).toBe(404);
      // ExpandAll is false on iLO 5; levels beyond MaxLevels; a malformed value.
      const all = await call(bmc, 'GET', `${nics}?$expand=*($levels=1)`);
      expect(all.status).toBe(501);
      expect(messageIds(all)).toEqual(['Base.1.8.QueryNotSupported']);
      const deep = await call(bmc, 'GET', `${nics}?$expand=.($levels=2)`);
      expect(deep.status).toBe(400);
      expect(messageIds(deep)).toEqual(['Base.1.8.QueryParameterOutOfRange']);
      expect(messageIds(await call(bmc, 'GET', `${nics}?$expand=Members`))).toEqual(['Base.1.8.QueryParameterValueFormatError']);
      expect(bmc.requestCount('GET', 'EthernetInterfaces')).toBe(11); // counted with their queries
    });

    it('`*` where ExpandAll is advertised; 501 where ExpandQuery says no; ignored where the root does not mention it', async () => {
      const dmtf = await fake('dmtf-public-rackmount1');
      const r = await call(dmtf, 'GET', '/redfish/v1/Systems/437XR1138R2/EthernetInterfaces?$expand=*($levels=1)');
      expect((r.body.Members as Record<string, unknown>[]).map((m) => m.MACAddress)).toEqual(['12:44:6A:3B:04:11', 'AA:BB:CC:DD:EE:00', '12:44:6A:3B:04:11', 'AA:BB:CC:DD:EE:FE']);
      // The fake implements one level even where the tree's MaxLevels (6) allows more.
      expect((await call(dmtf, 'GET', '/redfish/v1/Systems?$expand=.($levels=2)')).status).toBe(400);

      const openbmc = await fake('openbmc-bmcweb-stock');
      const refused = await call(openbmc, 'GET', '/redfish/v1/Systems?$expand=.($levels=1)');
      expect(refused.status).toBe(501); // as stock bmcweb answers
      expect((await call(openbmc, 'GET', '/redfish/v1/Systems')).status).toBe(200);

      const dir = scratch('tsbm-mockup-');
      cpSync(`${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, dir, { recursive: true });
      const root = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as Record<string, unknown>;
      delete root.ProtocolFeaturesSupported;
      writeFileSync(join(dir, 'index.json'), JSON.stringify(root));
      const old = await startFakeBmc({ mockupDir: dir, password: 'pw' });
      open.push(old);
      const ignored = await call(old, 'GET', `${nics}?$expand=.($levels=1)`);
      expect(ignored.status).toBe(200);
      expect(ignored.body.Members).toEqual([1, 2, 3, 4].map((i) => ({ '@odata.id': `${nics}/${i}` })));
    });

    it('fault knobs: an advertised $expand ignored (bare links), refused (400) or unimplemented (501)', async () => {
      const ignoring = await fake('hpe-ilo5-dl325-gen10plus', { faults: { expandQuery: 'ignored' } });
      expect((await call(ignoring, 'GET', `${nics}?$expand=.($levels=1)`)).body.Members).toEqual([1, 2, 3, 4].map((i) => ({ '@odata.id': `${nics}/${i}` })));
      const refusing = await fake('hpe-ilo5-dl325-gen10plus', { faults: { expandQuery: 'refused' } });
      const r = await call(refusing, 'GET', `${nics}?$expand=.($levels=1)`);
      expect(r.status).toBe(400);
      expect(messageIds(r)).toEqual(['Base.1.8.QueryNotSupported']);
      expect((await call(refusing, 'GET', nics)).status).toBe(200);
      const unimplemented = await fake('hpe-ilo5-dl325-gen10plus', { faults: { expandQuery: 'unimplemented' } });
      expect((await call(unimplemented, 'GET', `${nics}?$expand=.($levels=1)`)).status).toBe(501);
    });
  });
});
