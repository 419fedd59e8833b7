// Reading a collection's members in one request with the Redfish `$expand` query where the
// BMC advertises it (service root `ProtocolFeaturesSupported.ExpandQuery`), member by member
// otherwise. Of the captured trees, iLO 5 (NoLinks, MaxLevels 1), iDRAC, Supermicro and the
// DMTF reference advertise it; OpenBMC's bmcweb says no (its stock build answers 501 to any
// `$expand`). A BMC may still advertise it and not deliver, so the reply is checked, and a
// BMC that failed once is not asked again by the same client.
import type { RedfishClient } from './client.js';
import { linkOf } from './links.js';
import type { Json } from './transport.js';

/**
 * The query that expands a collection's Members one level, or undefined when the service
 * root does not promise `$levels`. `.` (subordinate resources only) where NoLinks is
 * supported, else `*` (everything). Sent unencoded, as sushy sends `?$expand=.($levels=1)`
 * (python-requests leaves these characters alone; they are legal in a query).
 */
export function expandQueryFor(root: Json): string | undefined {
  const features = root.ProtocolFeaturesSupported as Json | undefined;
  const eq = features?.ExpandQuery as Json | undefined;
  if (eq?.Levels !== true) return undefined;
  if (typeof eq.MaxLevels === 'number' && eq.MaxLevels < 1) return undefined;
  if (eq.NoLinks === true) return '?$expand=.($levels=1)';
  if (eq.ExpandAll === true) return '?$expand=*($levels=1)';
  return undefined;
}

/** True when a Members entry carries the resource, not just its `@odata.id` (as sushy decides). */
export function isExpandedMember(m: unknown): m is Json {
  return !!m && typeof m === 'object' && !Array.isArray(m) && Object.keys(m).some((k) => k !== '@odata.id');
}

/** Clients whose BMC advertised `$expand` but did not deliver it. */
const expandFailed = new WeakSet<RedfishClient>();

/**
 * The bodies of a collection's members (those that exist), in the collection's order;
 * undefined when the collection itself does not exist (404). One request where `$expand`
 * works, else one for the collection plus one per member.
 */
export async function collectionMembers(client: RedfishClient, path: string): Promise<Json[] | undefined> {
  const bmc = client.endpoint.bmc;
  const query = expandFailed.has(client) ? undefined : expandQueryFor(await client.serviceRoot());
  let coll: Json | undefined;
  if (query) {
    const res = await client.raw('GET', `${path}${query}`);
    const members = res.status >= 200 && res.status < 300 ? res.body?.Members : undefined;
    if (Array.isArray(members)) {
      if (members.every(isExpandedMember)) return members;
      client.log(`BMC ${bmc} advertises $expand but listed ${path} without the members; reading them one by one from now on`, 2);
      expandFailed.add(client);
      coll = res.body;
    } else {
      // 400/501 for a query it does not take; some BMCs take the query for part of the path
      // and answer 404, so the plain collection decides whether it is really missing.
      client.log(`BMC ${bmc} answered HTTP ${res.status} to GET ${path}${query} without expanded members; reading the members one by one`, 2);
    }
  }
  if (!coll) {
    const plain = await client.tryGet(path);
    if (!plain) return undefined;
    if (query) expandFailed.add(client);
    coll = plain.body;
  }
  const out: Json[] = [];
  for (const m of Array.isArray(coll.Members) ? coll.Members.map(linkOf) : []) {
    if (!m) continue;
    const r = await client.tryGet(m);
    if (r) out.push(r.body);
  }
  return out;
}
