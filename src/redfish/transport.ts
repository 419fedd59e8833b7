// HTTP(S) to one BMC: one keep-alive connection (undici; about a third less CPU per request
// than node:http, which a thousand BMCs' requests feel), per-request timeout, TLS verification
// choice, one request at a time (BMCs fall over under parallel load), bounded retries through
// util/wait.
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { Agent as UndiciAgent } from 'undici';
import { TsbmError } from '../errors.js';
import { DEFAULT_LIMITS, fmtLimit } from '../util/limits.js';
import { OverCapError, readCapped } from '../util/read-capped.js';
import { retry } from '../util/wait.js';
import type { RedfishEndpoint } from './endpoint.js';
import { RedfishError } from './errors.js';
import { OriginPolicy } from './origin.js';
import { systemCas, TLS_TRUST_CODES } from '../http/trust.js';

export type Json = Record<string, unknown>;

export interface RedfishResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body, when there is one. */
  body: Json | undefined;
  /** An error answer's body as text, whatever its content type (BMCs answer plain text or HTML labelled JSON). */
  text?: string;
}

export interface RetryPolicy {
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface TransportOptions {
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  onRetry?: (info: { attempt: number; retries: number; delayMs: number; reason: string }) => void;
  signal?: AbortSignal;
  /** The inventory node this BMC belongs to, for errors. */
  node?: string;
  /** Largest response body read (tsbm_max_redfish_body); a larger one is refused. */
  maxBodyBytes?: number;
}

const DEFAULT_RETRY: RetryPolicy = { retries: 4, baseDelayMs: 500, maxDelayMs: 10_000 };


/** A connection-level failure (no HTTP answer). */
class ConnectionError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    /** False when the request may have reached the BMC (unsafe to repeat a POST). */
    readonly beforeSend: boolean,
  ) {
    super(message);
    this.name = 'ConnectionError';
  }
}

/** An HTTP status worth repeating, carried through retry() and rethrown as-is at the end. */
class RetryableStatus extends Error {
  constructor(readonly response: RedfishResponse) {
    super(`HTTP ${response.status}`);
  }
}

// Failures before the request could reach the BMC: safe to repeat even an action.
const CONNECT_PHASE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

/** An undici or socket failure as a ConnectionError (retry() decides by code; TLS ones are final). */
function connectionError(e: unknown, timeoutMs: number, aborted: boolean): ConnectionError {
  const err = e as Error & { code?: string };
  const code = err.code;
  if (aborted) return new ConnectionError('aborted', code, false);
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return new ConnectionError(`no connection within ${timeoutMs} ms`, 'ETIMEDOUT', true);
  // The BMC closed the connection with the request sent (or being sent): it may have acted.
  if (code === 'UND_ERR_SOCKET') return new ConnectionError(`the BMC reset the connection (${err.message})`, 'ECONNRESET', false);
  return new ConnectionError(err.message, code, code !== undefined && (CONNECT_PHASE.has(code) || TLS_TRUST_CODES.has(code)));
}

// Loaded on first use: about 0.1 s, which runs without a BMC need not pay.
let undici: Promise<typeof import('undici')> | undefined;
function loadUndici(): Promise<typeof import('undici')> {
  undici ??= import('undici');
  return undici;
}

/**
 * `redfish_verify_ca: true` means the system's CAs (where sites install their internal CA),
 * not only Node's built-in list: both are trusted (http/trust.ts, as for the controller's other
 * HTTPS checks).
 */
const secureContexts = new Map<string, SecureContext>();

/**
 * One TLS context per trust bundle for the whole run: without it every new BMC connection
 * parsed the bundle again (a fleet shares one lab CA, and the system bundle is large).
 */
function secureContextFor(ca: string | undefined): SecureContext {
  const key = ca ?? '';
  let c = secureContexts.get(key);
  if (!c) {
    c = createSecureContext(ca ? { ca } : {});
    secureContexts.set(key, c);
  }
  return c;
}


export class Transport {
  private dispatcher: Promise<UndiciAgent> | undefined;
  private readonly tls: { rejectUnauthorized: boolean; secureContext: SecureContext } | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private readonly policy: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly origins: OriginPolicy;

  constructor(
    readonly endpoint: RedfishEndpoint,
    private readonly opts: TransportOptions = {},
  ) {
    this.policy = { ...DEFAULT_RETRY, ...opts.retry };
    this.timeoutMs = opts.timeoutMs ?? 60_000;
    this.origins = new OriginPolicy(endpoint.baseUrl, endpoint.allowedOrigins ?? [], { bmc: endpoint.bmc, node: opts.node });
    if (!endpoint.baseUrl.startsWith('http:')) {
      let ca: string | undefined;
      if (typeof endpoint.verifyCa === 'string') {
        try {
          ca = readFileSync(endpoint.verifyCa, 'utf8');
        } catch (e) {
          throw new TsbmError('options', `cannot read the CA bundle ${endpoint.verifyCa} given as driver_info.redfish_verify_ca: ${(e as Error).message}`, {
            hint: 'point redfish_verify_ca at a readable PEM file with the BMC certificate or its CA',
          });
        }
      }
      if (endpoint.verifyCa === true) ca = systemCas();
      this.tls = { rejectUnauthorized: endpoint.verifyCa !== false, secureContext: secureContextFor(ca) };
    }
  }

  /** The connection to this BMC (and to any other origin it links to), made on first use. */
  private agent(): Promise<UndiciAgent> {
    this.dispatcher ??= loadUndici().then(
      ({ Agent }) =>
        new Agent({
          connections: 1,
          // Kept across a long task (a deploy between two Redfish tasks), unless the BMC says less.
          keepAliveTimeout: 600_000,
          keepAliveMaxTimeout: 600_000,
          // once() keeps the deadline: undici's own header and body timers (half-second ticks) are off.
          headersTimeout: 0,
          bodyTimeout: 0,
          connect: { timeout: this.timeoutMs, ...(this.tls ?? {}) },
        }),
    );
    return this.dispatcher;
  }

  /** Full URL for a path (`/redfish/v1/...`) or an absolute URL the BMC handed out, for messages. */
  url(path: string): string {
    try {
      return this.origins.resolve(path, 'GET').href;
    } catch {
      return path;
    }
  }

  /**
   * One request, queued behind any other to this BMC, retried on connection errors (not for a
   * POST that may have been delivered), on 503/429 and on 5xx but 501 for reads. Other statuses are returned.
   */
  request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, retries?: number): Promise<RedfishResponse> {
    // Checked before queueing: a URL at another origin gets nothing, not even a connection.
    let target: URL;
    try {
      target = this.origins.resolve(path, method);
    } catch (e) {
      return Promise.reject(e);
    }
    const run = () =>
      retry(
        async () => {
          const res = await this.once(method, target, body, headers);
          // 501 Not Implemented is final (e.g. a `$expand` the BMC does not do after all).
          if (res.status === 503 || res.status === 429 || (method === 'GET' && res.status >= 500 && res.status !== 501)) throw new RetryableStatus(res);
          return res;
        },
        {
          ...this.policy,
          ...(retries !== undefined ? { retries } : {}),
          ...(this.opts.signal ? { signal: this.opts.signal } : {}),
          retryable: (e) =>
            e instanceof RetryableStatus ||
            (e instanceof ConnectionError &&
              !TLS_TRUST_CODES.has(e.code ?? '') &&
              // A login may be repeated safely (a duplicate session only expires); an action may not.
              (method !== 'POST' || e.beforeSend || /\/SessionService\/Sessions\/?$/.test(path))),
          delayFor: (e) => {
            if (!(e instanceof RetryableStatus)) return undefined;
            const ra = Number(e.response.headers['retry-after']);
            return Number.isFinite(ra) ? Math.min(ra * 1000, this.policy.maxDelayMs) : undefined;
          },
          onRetry: ({ attempt, retries, delayMs, error }) =>
            this.opts.onRetry?.({ attempt, retries, delayMs, reason: `${method} ${path}: ${error instanceof Error ? error.message : String(error)}` }),
        },
      ).catch((e: unknown) => {
        if (e instanceof RetryableStatus) return e.response; // out of retries: the caller reports the status
        throw this.wrap(e, method, path);
      });
    const p = this.tail.then(run, run);
    this.tail = p.catch(() => undefined);
    return p;
  }

  private wrap(e: unknown, method: string, path: string): unknown {
    if (!(e instanceof ConnectionError)) return e;
    const base = { method, url: this.url(path), bmc: this.endpoint.bmc, cause: e };
    if (e.code && TLS_TRUST_CODES.has(e.code)) {
      return new RedfishError(`refused: the BMC's TLS certificate is not trusted (${e.code})`, {
        ...base,
        hint: `pass the BMC's CA certificate with driver_info.redfish_verify_ca: /path/to/bmc-ca.pem, or opt out of verification with redfish_verify_ca: false`,
      });
    }
    return new RedfishError(`failed: ${e.message}`, { ...base, hint: 'check that the BMC address is right and reachable from the controller' });
  }

  private async once(method: string, url: URL, body: unknown, headers: Record<string, string>): Promise<RedfishResponse> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const agent = await this.agent();
    // Our own deadline: undici's header and body timeouts tick in half seconds. One run's
    // signal serves every request to every BMC: each listener goes with its request.
    const run = this.opts.signal;
    const deadline = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      deadline.abort();
    }, this.timeoutMs);
    const onAbort = () => deadline.abort();
    run?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: method as 'GET',
        headers: {
          Accept: 'application/json',
          'OData-Version': '4.0',
          ...(payload ? { 'Content-Type': 'application/json' } : {}),
          ...headers,
        },
        ...(payload ? { body: payload } : {}),
        signal: deadline.signal,
      });
      const cap = this.opts.maxBodyBytes ?? DEFAULT_LIMITS.redfishBodyBytes;
      const declared = Number(res.headers['content-length']);
      if (declared > cap) {
        res.body.destroy();
        throw new OverCapError(cap, declared);
      }
      const text = (await readCapped(res.body, cap)).toString('utf8');
      let parsed: Json | undefined;
      if (text.trim()) {
        try {
          const v = JSON.parse(text) as unknown;
          parsed = v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
        } catch {
          parsed = undefined; // some BMCs answer HTML on errors; the status still tells the story
        }
      }
      const errorText = res.statusCode >= 400 && text.trim() ? { text } : {};
      return { status: res.statusCode, headers: res.headers as IncomingHttpHeaders, body: parsed, ...errorText };
    } catch (e) {
      if (e instanceof OverCapError) {
        // Final, not retried: the same BMC would send the same again.
        throw new RedfishError(`refused: the response is larger than ${fmtLimit(e.cap)}; tsbm stopped reading it`, {
          method,
          url: url.href,
          bmc: this.endpoint.bmc,
          ...(this.opts.node ? { host: this.opts.node } : {}),
          hint: 'a Redfish answer this big is a broken or hostile BMC; if it is genuine, raise tsbm_max_redfish_body',
        });
      }
      // Not known to be unsent (the deadline covers connecting too): an action is not repeated.
      if (timedOut) throw new ConnectionError(`no answer within ${this.timeoutMs} ms`, 'ETIMEDOUT', false);
      throw connectionError(e, this.timeoutMs, run?.aborted === true);
    } finally {
      clearTimeout(timer);
      run?.removeEventListener('abort', onAbort);
    }
  }

  close(): void {
    void this.dispatcher?.then((a) => a.destroy()).catch(() => undefined);
  }
}
