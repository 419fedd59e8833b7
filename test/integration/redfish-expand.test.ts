// NIC MACs through `$expand`: one request for the EthernetInterfaces collection and its
// members where the service root advertises it, member by member where it does not, and a
// fallback (remembered per client) for BMCs that advertise it and do not deliver.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findSystem } from '../../src/redfish/discovery.js';
import { collectionMembers } from '../../src/redfish/expand.js';
import { redfishClientFor } from '../../src/redfish/pool.js';
import { macAddresses } from '../../src/redfish/power.js';
import { type FakeBmcOptions, startFakeBmc } from '../../packages/lab/src/bmc/server.js';
import { scratchDirs } from '../helpers/scratch.js';
import { closeAfterEach, driverInfo, MOCKUPS, makeCtx, TREES } from './redfish-helpers.js';

const scratch = scratchDirs();

const track = closeAfterEach();

async function lab(dir: string, opts: Partial<FakeBmcOptions> = {}) {
  const bmc = await startFakeBmc({ mockupDir: dir, password: 'S3cret-pass!', ...opts });
  const t = makeCtx({ driver_info: driverInfo(bmc, { redfish_verify_ca: false }) });
  track(bmc, t);
  const client = redfishClientFor(t.ctx, driverInfo(bmc, { redfish_verify_ca: false }));
  return { bmc, t, client };
}

const HPE_MACS = ['94:40:c9:5c:86:bc', '94:40:c9:5c:86:bd', '14:02:ec:d9:3a:a0', '14:02:ec:d9:3a:a1'];
const HPE_NICS = '/redfish/v1/Systems/1/EthernetInterfaces';

/**
 * Per shipped tree: the MACs (as the member-by-member read found them) and the GETs of
 * EthernetInterfaces paths. Dell and OpenBMC link no NICs; Supermicro links a collection the
 * partial tree lacks, so its `$expand` 404 is checked against the plain path (also 404).
 */
const EXPECTED: Record<(typeof TREES)[number], { macs: string[]; nicGets: number }> = {
  'hpe-ilo5-dl325-gen10plus': { macs: HPE_MACS, nicGets: 1 }, // NoLinks, MaxLevels 1: `.`; was 1 + 4
  'dmtf-public-rackmount1': { macs: ['12:44:6a:3b:04:11', 'aa:bb:cc:dd:ee:00', 'aa:bb:cc:dd:ee:fe'], nicGets: 1 }, // was 1 + 4
  'openbmc-bmcweb-stock': { macs: [], nicGets: 0 },
  'dell-idrac9-partial': { macs: [], nicGets: 0 },
  'supermicro-sys510t-partial': { macs: [], nicGets: 2 },
};

/** A copy of the HPE tree whose service root says `features` about ExpandQuery (undefined: nothing). */
function hpeWithExpandQuery(features: Record<string, unknown> | undefined): string {
  const dir = scratch('tsbm-mockup-');
  cpSync(`${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, dir, { recursive: true });
  const root = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as { ProtocolFeaturesSupported: Record<string, unknown> };
  if (features) root.ProtocolFeaturesSupported.ExpandQuery = features;
  else delete root.ProtocolFeaturesSupported.ExpandQuery;
  writeFileSync(join(dir, 'index.json'), JSON.stringify(root));
  return dir;
}

describe('NIC MACs with $expand, per shipped tree', () => {
  for (const tree of TREES) {
    it(`${tree}: same MACs, ${EXPECTED[tree].nicGets} GET(s) of EthernetInterfaces`, async () => {
      const { bmc, client } = await lab(`${MOCKUPS}/${tree}`);
      const system = await findSystem(client);
      expect(await macAddresses(client, system)).toEqual(EXPECTED[tree].macs);
      expect(bmc.requestCount('GET', 'EthernetInterfaces')).toBe(EXPECTED[tree].nicGets);
    });
  }

  it('the expanded request is the one sushy sends, unencoded', async () => {
    const { bmc, client } = await lab(`${MOCKUPS}/hpe-ilo5-dl325-gen10plus`);
    await macAddresses(client, await findSystem(client));
    expect(bmc.requestCount('GET', `${HPE_NICS}?$expand=.($levels=1)`)).toBe(1);
  });

  it('a root advertising only ExpandAll gets `*($levels=1)`', async () => {
    const { bmc, client } = await lab(hpeWithExpandQuery({ ExpandAll: true, Levels: true, Links: true, MaxLevels: 2, NoLinks: false }));
    expect(await macAddresses(client, await findSystem(client))).toEqual(HPE_MACS);
    expect(bmc.requestCount('GET', 'EthernetInterfaces')).toBe(1);
    expect(bmc.requestCount('GET', `${HPE_NICS}?$expand=*($levels=1)`)).toBe(1);
  });

  for (const [name, features] of [
    ['no ExpandQuery in the root', undefined],
    ['ExpandQuery all false (as OpenBMC)', { ExpandAll: false, Levels: false, Links: false, NoLinks: false }],
    ['NoLinks without Levels', { ExpandAll: true, Levels: false, Links: true, NoLinks: true }],
  ] as const) {
    it(`${name}: member by member, 1 + 4 GETs, no $expand`, async () => {
      const { bmc, client } = await lab(hpeWithExpandQuery(features));
      expect(await macAddresses(client, await findSystem(client))).toEqual(HPE_MACS);
      expect(bmc.requestCount('GET', 'EthernetInterfaces')).toBe(5);
      expect(bmc.requestCount('GET', '$expand')).toBe(0);
    });
  }
});

describe('BMCs that advertise $expand and do not deliver', () => {
  for (const fault of ['ignored', 'refused', 'unimplemented'] as const) {
    it(`$expand ${fault}: the MACs still come, member by member, and expand is not tried again by that client`, async () => {
      const { bmc, t, client } = await lab(`${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, { faults: { expandQuery: fault } });
      expect(await macAddresses(client, await findSystem(client))).toEqual(HPE_MACS);
      // ignored: the expanded GET listed the members, then one GET each; refused/unimplemented:
      // 400/501 (not retried), the plain collection, then one GET each.
      expect(bmc.requestCount('GET', 'EthernetInterfaces')).toBe(fault === 'ignored' ? 5 : 6);
      expect(bmc.requestCount('GET', '$expand')).toBe(1);
      expect(t.retries).toEqual([]);
      expect(t.logs.some((l) => /\$expand/.test(l.message))).toBe(true);

      // The MACs are remembered; another collection read by the same client skips $expand.
      const again = await collectionMembers(client, HPE_NICS);
      expect(again?.map((n) => n.MACAddress)).toEqual(HPE_MACS);
      expect(bmc.requestCount('GET', '$expand')).toBe(1);
      expect(bmc.requestCount('GET', 'EthernetInterfaces')).toBe(fault === 'ignored' ? 10 : 11);
      expect(t.retries).toEqual([]);
    });
  }

  it('the memory is per client: a new run tries $expand again', async () => {
    const { bmc, client } = await lab(`${MOCKUPS}/hpe-ilo5-dl325-gen10plus`, { faults: { expandQuery: 'refused' } });
    await collectionMembers(client, HPE_NICS);
    await collectionMembers(client, HPE_NICS);
    expect(bmc.requestCount('GET', '$expand')).toBe(1);
    const t2 = makeCtx({ driver_info: driverInfo(bmc, { redfish_verify_ca: false }) });
    try {
      const other = redfishClientFor(t2.ctx, driverInfo(bmc, { redfish_verify_ca: false }));
      expect(other).not.toBe(client);
      await collectionMembers(other, HPE_NICS);
      expect(bmc.requestCount('GET', '$expand')).toBe(2);
    } finally {
      await t2.close();
    }
  });

  it('a working $expand is used for every read', async () => {
    const { bmc, client } = await lab(`${MOCKUPS}/hpe-ilo5-dl325-gen10plus`);
    await collectionMembers(client, HPE_NICS);
    await collectionMembers(client, HPE_NICS);
    expect(bmc.requestCount('GET', 'EthernetInterfaces')).toBe(2);
    expect(bmc.requestCount('GET', '$expand')).toBe(2);
  });

  it('a missing collection is undefined, expanded or not', async () => {
    const { bmc, client } = await lab(`${MOCKUPS}/hpe-ilo5-dl325-gen10plus`);
    expect(await collectionMembers(client, '/redfish/v1/Systems/1/Nope')).toBeUndefined();
    expect(bmc.requestCount('GET', '/Nope')).toBe(2); // expanded, then plain: both 404
    // A collection that is really missing does not count against $expand.
    expect(await collectionMembers(client, HPE_NICS)).toHaveLength(4);
    expect(bmc.requestCount('GET', 'EthernetInterfaces')).toBe(1);
  });
});
