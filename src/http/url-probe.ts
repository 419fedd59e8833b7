// Does a URL answer with content? One GET for the first byte (a Range request: a server that
// ignores it is cut off after the headers), redirects followed. GET rather than HEAD: signed
// URLs (S3 and friends) are signed for one method, and some file servers refuse HEAD.
import { type CheckClient, headerOf, HttpCheckError } from './check-client.js';
import { type EndpointFor, registryTarget } from './registry-target.js';

export interface ProbeOptions {
  tlsVerify?: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Where the controller reaches a host the URL names (image_url_endpoints): the request goes
   * there with the URL's host as Host and TLS name. Redirects are mapped too.
   */
  endpointFor?: EndpointFor;
}

type ProbeFailure = 'not_found' | 'denied' | 'status' | 'unreachable' | 'tls' | 'timeout' | 'redirects';

export type ProbeResult =
  | { ok: true; status: number; /** Total size when the server said. */ size?: number }
  | { ok: false; why: ProbeFailure; message: string; status?: number };

const MAX_REDIRECTS = 5;

function sizeOf(status: number, headers: Parameters<typeof headerOf>[0]): number | undefined {
  const range = headerOf(headers, 'content-range');
  const total = range ? /\/(\d+)\s*$/.exec(range)?.[1] : undefined;
  if (total !== undefined) return Number(total);
  const len = headerOf(headers, 'content-length');
  return status === 200 && len !== undefined && /^\d+$/.test(len) ? Number(len) : undefined;
}

export async function probeUrl(client: CheckClient, url: string, o: ProbeOptions = {}): Promise<ProbeResult> {
  let at = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    let res: Awaited<ReturnType<CheckClient['request']>>;
    try {
      const target = registryTarget(at, o.endpointFor);
      res = await client.request(target.url, {
        method: 'GET',
        headers: { Range: 'bytes=0-0', 'User-Agent': 'tsbm-preflight', ...target.headers },
        ...(target.servername ? { servername: target.servername } : {}),
        maxBodyBytes: 0,
        ...(o.tlsVerify !== undefined ? { tlsVerify: o.tlsVerify } : {}),
        ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
        ...(o.signal ? { signal: o.signal } : {}),
      });
    } catch (e) {
      if (!(e instanceof HttpCheckError) || e.kind === 'aborted') throw e;
      const why: ProbeFailure = e.kind === 'tls' ? 'tls' : e.kind === 'timeout' ? 'timeout' : 'unreachable';
      return { ok: false, why, message: e.message };
    }
    const s = res.status;
    const location = headerOf(res.headers, 'location');
    if (s >= 300 && s < 400 && location) {
      at = new URL(location, at).href;
      continue;
    }
    if (s === 200 || s === 206) {
      const size = sizeOf(s, res.headers);
      return size === undefined ? { ok: true, status: s } : { ok: true, status: s, size };
    }
    // Range past the end: the file is there and empty.
    if (s === 416) return { ok: true, status: s, size: 0 };
    if (s === 404 || s === 410) return { ok: false, why: 'not_found', message: `HTTP ${s} (not found)`, status: s };
    if (s === 401 || s === 403) return { ok: false, why: 'denied', message: `HTTP ${s} (access denied)`, status: s };
    return { ok: false, why: 'status', message: `HTTP ${s}`, status: s };
  }
  return { ok: false, why: 'redirects', message: `more than ${MAX_REDIRECTS} redirects` };
}
