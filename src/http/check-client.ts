// The controller's HTTP client for checks made before a deploy (registry manifests, ISO and
// image URLs): one request at a time per call, a deadline covering headers and body, a cap on
// the body kept, no redirects followed (callers decide), and errors sorted into what an
// operator can act on (unreachable, TLS trust, timeout). undici, loaded on first use.
import type { IncomingHttpHeaders } from 'node:http';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Agent } from 'undici';
import { systemCas, TLS_TRUST_CODES } from './trust.js';

export interface CheckRequest {
  method?: 'GET' | 'HEAD' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** false: the certificate is not verified (an insecure registry, a reachability probe). */
  tlsVerify?: boolean;
  /** Name the TLS certificate must carry when it differs from the URL's host (an endpoint override). */
  servername?: string;
  /** Deadline for the whole exchange (default 30 s). */
  timeoutMs?: number;
  /** Body bytes kept (default 64 KiB); the rest is not read. 0 reads none. */
  maxBodyBytes?: number;
  signal?: AbortSignal;
}

export interface CheckResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The body was longer than maxBodyBytes. */
  truncated: boolean;
}

export type CheckErrorKind = 'unreachable' | 'tls' | 'timeout' | 'protocol' | 'aborted';

/** No HTTP answer: what went wrong, sorted by what the operator can do about it. */
export class HttpCheckError extends Error {
  constructor(
    message: string,
    readonly kind: CheckErrorKind,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'HttpCheckError';
  }
}

let undici: Promise<typeof import('undici')> | undefined;
const loadUndici = () => {
  undici ??= import('undici');
  return undici;
};

let trusted: SecureContext | undefined;

/** A failed request's error (undici's, Node's), sorted by what the operator can do about it. */
export function httpErrorOf(e: unknown, timedOut = false, aborted = false): HttpCheckError {
  const err = e as Error & { code?: string; cause?: Error & { code?: string } };
  const code = err.code ?? err.cause?.code;
  const text = err.cause?.message ?? err.message;
  if (aborted) return new HttpCheckError('aborted', 'aborted', code);
  if (timedOut || code === 'UND_ERR_CONNECT_TIMEOUT') return new HttpCheckError('no answer in time', 'timeout', code);
  if (code && TLS_TRUST_CODES.has(code)) return new HttpCheckError(`certificate not trusted (${code})`, 'tls', code);
  // A TLS hello answered in plain HTTP, or the reverse.
  if (code === 'EPROTO' || /wrong version number|packet length too long|ssl/i.test(text)) {
    return new HttpCheckError(`TLS handshake failed (${text})`, 'protocol', code);
  }
  return new HttpCheckError(code ? `${code}: ${text}` : text, 'unreachable', code);
}

export class CheckClient {
  private readonly agents = new Map<string, Promise<Agent>>();

  private agent(tlsVerify: boolean, servername: string | undefined): Promise<Agent> {
    const key = `${tlsVerify}|${servername ?? ''}`;
    let a = this.agents.get(key);
    if (!a) {
      a = loadUndici().then(({ Agent }) => {
        trusted ??= createSecureContext({ ca: systemCas() });
        return new Agent({
          connections: 4,
          keepAliveTimeout: 5_000,
          headersTimeout: 0,
          bodyTimeout: 0,
          connect: {
            rejectUnauthorized: tlsVerify,
            ...(tlsVerify ? { secureContext: trusted } : {}),
            ...(servername ? { servername } : {}),
          },
        });
      });
      this.agents.set(key, a);
    }
    return a;
  }

  async request(url: string, r: CheckRequest = {}): Promise<CheckResponse> {
    const u = new URL(url);
    const agent = await this.agent(r.tlsVerify !== false, u.protocol === 'https:' ? r.servername : undefined);
    const deadline = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      deadline.abort();
    }, r.timeoutMs ?? 30_000);
    const onAbort = () => deadline.abort();
    r.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await agent.request({
        origin: u.origin,
        path: `${u.pathname}${u.search}`,
        method: r.method ?? 'GET',
        headers: r.headers ?? {},
        ...(r.body !== undefined ? { body: r.body } : {}),
        signal: deadline.signal,
      });
      const limit = r.maxBodyBytes ?? 64 * 1024;
      const chunks: Buffer[] = [];
      let kept = 0;
      let truncated = false;
      if (limit > 0 && r.method !== 'HEAD') {
        for await (const c of res.body) {
          const b = c as Buffer;
          if (kept + b.length > limit) {
            chunks.push(b.subarray(0, limit - kept));
            kept = limit;
            truncated = true;
            break;
          }
          chunks.push(b);
          kept += b.length;
        }
      }
      // Whatever is left unread (a probe's download, an over-long body) is dropped, not fetched;
      // the abort that closes it is expected, not an error.
      if (!res.body.destroyed) {
        res.body.on('error', () => {});
        res.body.destroy();
      }
      return { status: res.statusCode, headers: res.headers as IncomingHttpHeaders, body: Buffer.concat(chunks), truncated };
    } catch (e) {
      throw httpErrorOf(e, timedOut, r.signal?.aborted === true);
    } finally {
      clearTimeout(timer);
      r.signal?.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(agents.map((a) => a.then((x) => x.destroy()).catch(() => undefined)));
  }
}

/** A header's value as one string (the first, when repeated). */
export function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}
