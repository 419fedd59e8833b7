// Faults as a layer around the fake BMC's Redfish handler: what a BMC's network and web server do
// to a request before (or instead of) answering it: latency, 503 with Retry-After, a reset
// connection, an InsertMedia whose connection drops before or after the BMC acts on it, and an
// advertised `$expand` the service then ignores or refuses. Quirks of the firmware itself (a boot
// override it ignores, Once read back as Continuous, a strict InsertMedia, a task monitor that
// never completes) are how the handler behaves, not faults, and are passed to it.
import type { ServerResponse } from 'node:http';
import { type BmcFaults, FaultInjector } from './faults.js';
import type { BmcHandler, BmcRequest } from './http.js';
import { BmcHttpError } from './messages.js';
import { normPath } from './state.js';

export function withFaults(next: BmcHandler, faults: BmcFaults = {}): BmcHandler {
  const injector = new FaultInjector(faults);
  let insertDropped = false;
  return async (r: BmcRequest, res: ServerResponse) => {
    if (faults.latencyMs) await new Promise((done) => setTimeout(done, faults.latencyMs));
    const fault = injector.next();
    if (fault === 'reset') {
      r.req.socket.destroy();
      return;
    }
    if (fault === '503') {
      const retry = String(faults.retryAfterS ?? 0);
      throw new BmcHttpError(503, 'ServiceTemporarilyUnavailable', 'The service is temporarily unavailable.', 'Wait and retry.', { 'Retry-After': retry });
    }
    if (faults.dropInsertMedia && !insertDropped && r.method === 'POST' && normPath(r.url.pathname).endsWith('/VirtualMedia.InsertMedia')) {
      insertDropped = true;
      if (faults.dropInsertMedia === 'before') {
        r.req.socket.destroy();
        return;
      }
      // Acts on it, then the connection drops instead of the answer.
      res.end = (() => {
        r.req.socket.destroy();
        return res;
      }) as typeof res.end;
    }
    return next(expandAsServed(r, faults), res);
  };
}

/** The request as a service that ignores (or refuses) `$expand` takes it. */
function expandAsServed(r: BmcRequest, faults: BmcFaults): BmcRequest {
  // decoded: `%24expand=.%28...` counts too
  if (!faults.expandQuery || r.method !== 'GET' || r.url.searchParams.get('$expand') === null) return r;
  if (faults.expandQuery !== 'ignored') {
    throw new BmcHttpError(faults.expandQuery === 'refused' ? 400 : 501, 'QueryNotSupported', 'Querying is not supported by the implementation.');
  }
  const url = new URL(r.url);
  url.searchParams.delete('$expand');
  return { ...r, url };
}
