// The `$expand` query on a GET, as far as the fake BMC implements it: a collection's Members
// expanded in place, one level deep, when the tree's service root advertises
// `ProtocolFeaturesSupported.ExpandQuery`. What the trees suggest for the rest:
// - ExpandQuery present but without the asked form (OpenBMC's stock bmcweb says all false):
//   501 Not Implemented, as bmcweb answers, citing the Redfish spec's rule (DSP0266 7.3.1)
//   for unsupported query parameters that start with `$`;
// - no ExpandQuery at all (firmware older than ProtocolFeaturesSupported): the query is
//   ignored and the plain resource served, as such BMCs do with queries they do not know;
// - a malformed value: 400 QueryParameterValueFormatError; `$levels` beyond 1 (or beyond the
//   tree's MaxLevels): 400 QueryParameterOutOfRange. Only one level is implemented.
// Non-collection resources are served unexpanded (clients check each member anyway).
import { BmcHttpError } from './messages.js';
import { etagOf, type Json, odataId, ROOT } from './state.js';

/** The resource as the answer to a GET with `$expand=value`; throws BmcHttpError when refused. */
export function expandResource(tree: Map<string, Json>, resource: Json, value: string): Json {
  const eq = (tree.get(ROOT)?.ProtocolFeaturesSupported as Json | undefined)?.ExpandQuery as Json | undefined;
  if (!eq) return resource;
  const m = /^([.*~])(?:\(\$levels=(\d+)\))?$/.exec(value);
  if (!m) {
    throw new BmcHttpError(400, 'QueryParameterValueFormatError', `The value ${value} for the parameter $expand is of a different format than the parameter can accept.`, 'Correct the value for the query parameter in the request and resubmit the request if the operation failed.');
  }
  const kind = m[1] as '.' | '*' | '~';
  const supported = kind === '.' ? eq.NoLinks : kind === '*' ? eq.ExpandAll : eq.Links;
  if (supported !== true || (m[2] !== undefined && eq.Levels !== true)) {
    throw new BmcHttpError(501, 'QueryNotSupported', `Querying with $expand=${value} is not supported by the implementation.`, 'Remove the query parameters and resubmit the request if the operation failed.');
  }
  const levels = m[2] === undefined ? 1 : Number(m[2]);
  const max = Math.min(1, typeof eq.MaxLevels === 'number' ? eq.MaxLevels : 1);
  if (levels < 1 || levels > max) {
    throw new BmcHttpError(400, 'QueryParameterOutOfRange', `The value ${levels} for the query parameter $levels is out of range 1-${max}.`, 'Reduce the value for the query parameter to a value that is within range.');
  }
  // `~` expands only what sits under Links; a collection's Members do not.
  if (kind === '~' || !Array.isArray(resource.Members)) return resource;
  return {
    ...resource,
    Members: resource.Members.map((link) => {
      const path = odataId(link);
      const body = path ? tree.get(path) : undefined;
      return body ? { ...body, '@odata.etag': etagOf(body) } : link;
    }),
  };
}
