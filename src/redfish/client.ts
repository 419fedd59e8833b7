// RedfishClient: one BMC, authenticated, with ETag-aware PATCH, task-following actions and
// errors that name the BMC and what it said. Discovery and vendor differences live beside it.
import { BmcSession } from './bmc-session.js';
import { errorMessages, RedfishError } from './errors.js';
import type { RedfishEndpoint } from './endpoint.js';
import { etagFrom, patchWithEtag } from './etag.js';
import { followTask, TaskMonitorTimeout } from './task-monitor.js';
import { type Json, type RedfishResponse, Transport, type TransportOptions } from './transport.js';

export interface ClientOptions extends TransportOptions {
  /** Registers secrets (password, session token) for redaction. */
  onSecret?: (value: string) => void;
  onLog?: (message: string, level: 1 | 2 | 3) => void;
  onWarn?: (message: string) => void;
  /** Upper bound for following a 202 task monitor (default 300 s). */
  taskTimeoutMs?: number;
  /** Skip SessionService and use Basic auth. */
  basicAuth?: boolean;
}

export interface Resource {
  path: string;
  body: Json;
  etag: string | undefined;
}

export class RedfishClient {
  readonly transport: Transport;
  /** The BMC's service root and login, shared with the run's other clients of this BMC. */
  readonly session: BmcSession;
  private connected: Promise<void> | undefined;
  private closed = false;

  constructor(
    readonly endpoint: RedfishEndpoint,
    private readonly opts: ClientOptions = {},
    /** Another client's session on the same BMC with the same credentials; default: its own. */
    session?: BmcSession,
  ) {
    if (endpoint.password) opts.onSecret?.(endpoint.password);
    this.transport = new Transport(endpoint, opts);
    this.session =
      session ?? new BmcSession(endpoint, (v) => opts.onSecret?.(v), (m) => this.log(m, 2), opts.basicAuth ?? false, (m) => opts.onWarn?.(m));
    this.session.join();
  }

  get authKind(): 'none' | 'session' | 'basic' {
    return this.session.auth.kind;
  }

  log(message: string, level: 1 | 2 | 3 = 2): void {
    this.opts.onLog?.(message, level);
  }

  warn(message: string): void {
    this.opts.onWarn?.(message);
  }

  /** Reads the service root (no auth needed by the spec) and logs in; once per BMC session, lazily. */
  connect(): Promise<void> {
    this.connected ??= this.session
      .connect(this.transport, (res) => this.check(res, 'GET', '/redfish/v1/', 'did not answer the service root').body ?? {})
      .then(
        () => undefined,
        (e: unknown) => {
          this.connected = undefined;
          throw e;
        },
      );
    return this.connected;
  }

  private readonly memo = new Map<string, Promise<unknown>>();

  /**
   * `load` once per key for this client's life (one run): for facts a deploy does not change
   * and a BMC is slow to walk (the System's path, the CD slot, NIC MACs). A failed load is not
   * kept.
   */
  remember<T>(key: string, load: () => Promise<T>): Promise<T> {
    let p = this.memo.get(key) as Promise<T> | undefined;
    if (!p) {
      p = load();
      this.memo.set(key, p);
      p.catch(() => this.memo.delete(key));
    }
    return p;
  }

  async serviceRoot(): Promise<Json> {
    await this.connect();
    return this.session.serviceRoot;
  }

  /** An authenticated request; a 401 triggers one fresh login and one repeat. No status check. */
  async raw(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<RedfishResponse> {
    if (this.closed) throw new Error(`Redfish client for ${this.endpoint.bmc} is closed`);
    await this.connect();
    const auth = this.session.auth;
    const sent = auth.headers();
    let res = await this.transport.request(method, path, body, { ...headers, ...sent });
    if (res.status === 401 && auth.kind !== 'none') {
      this.log(`BMC ${this.endpoint.bmc} answered 401 to ${method} ${path}; logging in again`, 2);
      await this.session.relogin(this.transport, sent);
      res = await this.transport.request(method, path, body, { ...headers, ...auth.headers() });
    }
    return res;
  }

  check(res: RedfishResponse, method: string, path: string, what = 'failed'): RedfishResponse {
    if (res.status >= 200 && res.status < 300) return res;
    const hint = res.status === 401 || res.status === 403 ? 'check driver_info.redfish_username and redfish_password' : undefined;
    throw new RedfishError(what, {
      status: res.status,
      method,
      url: this.transport.url(path),
      bmc: this.endpoint.bmc,
      messages: errorMessages(res),
      ...(hint ? { hint } : {}),
    });
  }

  async get(path: string): Promise<Resource> {
    const res = this.check(await this.raw('GET', path), 'GET', path);
    const body = res.body ?? {};
    return { path, body, etag: etagFrom(res.headers, body) };
  }

  /** GET that answers undefined for 404 (links to resources a BMC does not really have). */
  async tryGet(path: string): Promise<Resource | undefined> {
    const res = await this.raw('GET', path);
    if (res.status === 404) return undefined;
    const body = this.check(res, 'GET', path).body ?? {};
    return { path, body, etag: etagFrom(res.headers, body) };
  }

  /**
   * The resource as an answer carries it (a PATCH answered 200 with the updated resource), or
   * undefined when the answer is not that resource (204, a message, a task monitor's result):
   * then only a read shows the state.
   */
  static representation(res: RedfishResponse, path: string): Resource | undefined {
    const id = res.body?.['@odata.id'];
    const same = (p: string) => p.replace(/\/+$/, '');
    if (res.status !== 200 || typeof id !== 'string' || same(id) !== same(path)) return undefined;
    return { path, body: res.body ?? {}, etag: etagFrom(res.headers, res.body) };
  }

  async patch(path: string, body: unknown, knownEtag?: string): Promise<RedfishResponse> {
    const res = await patchWithEtag(
      {
        etagOf: async (p) => (await this.get(p)).etag,
        patch: (p, b, h) => this.raw('PATCH', p, b, h),
        log: (m) => this.log(m, 2),
      },
      path,
      body,
      knownEtag,
    );
    return this.followIfAccepted(this.check(res, 'PATCH', path), 'PATCH', path);
  }

  /** POSTs an action; 202 + Location is followed to completion. */
  async post(path: string, body: unknown): Promise<RedfishResponse> {
    const res = this.check(await this.raw('POST', path, body), 'POST', path);
    return this.followIfAccepted(res, 'POST', path);
  }

  private async followIfAccepted(res: RedfishResponse, method: string, path: string): Promise<RedfishResponse> {
    const loc = res.headers.location;
    if (res.status !== 202 || typeof loc !== 'string' || !loc) return res;
    try {
      const final = await followTask(
        {
          get: (u) => this.raw('GET', u),
          ...(this.opts.signal ? { signal: this.opts.signal } : {}),
          onProgress: (m) => this.log(m, 3),
        },
        loc,
        this.opts.taskTimeoutMs ?? 300_000,
        this.opts.retry?.maxDelayMs ?? 5000,
      );
      return this.check(final, method, path, `task ${loc} failed`);
    } catch (e) {
      if (e instanceof TaskMonitorTimeout) {
        throw new RedfishError(`was accepted but its task did not finish: ${e.message}`, {
          method,
          url: this.transport.url(path),
          bmc: this.endpoint.bmc,
          hint: 'the BMC may be busy or stuck; check its task list, or raise the timeout',
        });
      }
      throw e;
    }
  }

  /** Drops its connection; the last client of a session logs out first. Safe to call twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.session.leave(this.transport);
    this.transport.close();
  }
}
