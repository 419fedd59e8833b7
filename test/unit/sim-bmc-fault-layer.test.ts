// The fake BMC's faults are a layer around its Redfish handler (packages/lab/src/bmc/fault-layer.ts):
// here the layer wraps a handler that only records what reached it, so each fault is seen
// apart from any Redfish behaviour: what never reaches the handler, what reaches it changed.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { withFaults } from '../../packages/lab/src/bmc/fault-layer.js';
import type { BmcFaults } from '../../packages/lab/src/bmc/faults.js';
import type { BmcRequest } from '../../packages/lab/src/bmc/http.js';
import { BmcHttpError } from '../../packages/lab/src/bmc/messages.js';

interface Outcome {
  /** The URL the handler got, or undefined when it was not reached. */
  reached?: string;
  status?: number;
  retryAfter?: string;
  destroyed: boolean;
}

function layer(faults: BmcFaults) {
  const reached: string[] = [];
  const handler = withFaults(async (r, res) => {
    reached.push(`${r.method} ${r.url.pathname}${r.url.search}`);
    res.end();
  }, faults);
  return async (method: string, path: string): Promise<Outcome> => {
    let destroyed = false;
    const req = { socket: { destroy: () => (destroyed = true) } } as unknown as IncomingMessage;
    const res = { end: () => res } as unknown as ServerResponse;
    const before = reached.length;
    const out: Outcome = { destroyed: false };
    try {
      await handler({ req, method, url: new URL(path, 'https://bmc'), raw: '' } satisfies BmcRequest, res);
    } catch (e) {
      if (!(e instanceof BmcHttpError)) throw e;
      out.status = e.status;
      if (e.headers['Retry-After']) out.retryAfter = e.headers['Retry-After'];
    }
    if (reached.length > before) out.reached = reached[before];
    out.destroyed = destroyed;
    return out;
  };
}

describe('the fake BMC fault layer', () => {
  it('passes every request through unchanged without faults', async () => {
    const send = layer({});
    expect(await send('GET', '/redfish/v1/Systems?$expand=.')).toEqual({ reached: 'GET /redfish/v1/Systems?$expand=.', destroyed: false });
  });

  it('answers the first N requests 503 with Retry-After, resets the next M, then lets them through', async () => {
    const send = layer({ first503: 2, firstResets: 1, retryAfterS: 3 });
    expect(await send('GET', '/redfish/v1')).toEqual({ status: 503, retryAfter: '3', destroyed: false });
    expect(await send('GET', '/redfish/v1')).toEqual({ status: 503, retryAfter: '3', destroyed: false });
    expect(await send('GET', '/redfish/v1')).toEqual({ destroyed: true });
    expect(await send('GET', '/redfish/v1')).toEqual({ reached: 'GET /redfish/v1', destroyed: false });
  });

  it('drops the first InsertMedia before the handler acts on it, and only the first', async () => {
    const send = layer({ dropInsertMedia: 'before' });
    const insert = '/redfish/v1/Managers/1/VirtualMedia/2/Actions/VirtualMedia.InsertMedia';
    expect(await send('POST', insert)).toEqual({ destroyed: true });
    expect(await send('POST', insert)).toEqual({ reached: `POST ${insert}`, destroyed: false });
  });

  it('drops the first InsertMedia after the handler acted: its answer never leaves', async () => {
    const send = layer({ dropInsertMedia: 'after' });
    const insert = '/redfish/v1/Managers/1/VirtualMedia/2/Actions/VirtualMedia.InsertMedia';
    expect(await send('POST', insert)).toEqual({ reached: `POST ${insert}`, destroyed: true });
  });

  it('serves an advertised $expand as ignored (the handler never sees it) or refuses it (400, 501)', async () => {
    expect(await layer({ expandQuery: 'ignored' })('GET', '/redfish/v1/Systems?%24expand=.&x=1')).toEqual({ reached: 'GET /redfish/v1/Systems?x=1', destroyed: false });
    expect(await layer({ expandQuery: 'refused' })('GET', '/redfish/v1/Systems?$expand=.')).toEqual({ status: 400, destroyed: false });
    expect(await layer({ expandQuery: 'unimplemented' })('GET', '/redfish/v1/Systems?$expand=.')).toEqual({ status: 501, destroyed: false });
    expect(await layer({ expandQuery: 'refused' })('GET', '/redfish/v1/Systems')).toEqual({ reached: 'GET /redfish/v1/Systems', destroyed: false });
  });
});
