// Authentication to a BMC: a SessionService session (X-Auth-Token) when the BMC offers one,
// else HTTP Basic. The session is deleted at close: leaked sessions lock iDRACs out. One Auth
// serves every System a run drives on one BMC with one set of credentials (a chassis manager,
// sushy-tools): one login, one session, whichever client's connection carries the request.
import type { RedfishEndpoint } from './endpoint.js';
import { errorMessages, RedfishError } from './errors.js';
import type { Json, Transport } from './transport.js';

export class Auth {
  private token: string | undefined;
  private sessionUrl: string | undefined;
  private mode: 'none' | 'session' | 'basic' = 'none';

  /** A login under way: clients that hit a 401 together wait for the same one. */
  private pending: Promise<void> | undefined;

  constructor(
    private readonly endpoint: RedfishEndpoint,
    /** Registers the session token for redaction as soon as it exists. */
    private readonly onSecret: (value: string) => void,
    private readonly onLog: (message: string) => void,
  ) {}

  get kind(): 'none' | 'session' | 'basic' {
    return this.mode;
  }

  /**
   * Logs in again after a 401 unless another client already did since `staleHeaders` were sent
   * (the token changed); concurrent callers share one login.
   */
  async refresh(transport: Transport, root: Json, staleHeaders: Record<string, string>, preferBasic: boolean): Promise<void> {
    if (this.pending) return this.pending;
    const now = this.headers();
    if (now['X-Auth-Token'] !== undefined && now['X-Auth-Token'] !== staleHeaders['X-Auth-Token']) return;
    this.pending = this.login(transport, root, preferBasic).finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** Opens a session (sessions path from the service root), falling back to Basic. */
  async login(transport: Transport, root: Json, preferBasic = false): Promise<void> {
    const { username, password } = this.endpoint;
    if (username === undefined || password === undefined) {
      this.mode = 'none';
      return;
    }
    const links = root.Links as Json | undefined;
    const sessionsLink = (links?.Sessions as Json | undefined)?.['@odata.id'];
    // Only a linked session collection is used: paths are never guessed.
    if (!preferBasic && typeof sessionsLink === 'string' && sessionsLink) {
      const path = sessionsLink;
      const res = await transport.request('POST', path, { UserName: username, Password: password });
      const token = res.headers['x-auth-token'];
      if (res.status >= 200 && res.status < 300 && typeof token === 'string' && token) {
        this.onSecret(token);
        this.token = token;
        const loc = res.headers.location;
        const id = typeof res.body?.['@odata.id'] === 'string' ? (res.body['@odata.id'] as string) : undefined;
        this.sessionUrl = typeof loc === 'string' && loc ? loc : id;
        this.mode = 'session';
        this.onLog(`Redfish session opened on ${this.endpoint.bmc}`);
        return;
      }
      if (res.status === 401 || res.status === 403) {
        throw new RedfishError('refused the credentials', {
          status: res.status,
          method: 'POST',
          url: transport.url(path),
          bmc: this.endpoint.bmc,
          messages: errorMessages(res),
          hint: 'check driver_info.redfish_username and redfish_password',
        });
      }
      this.onLog(`Redfish sessions unavailable on ${this.endpoint.bmc} (HTTP ${res.status}); using Basic auth`);
    } else if (!preferBasic) {
      this.onLog(`BMC ${this.endpoint.bmc} links no session collection; using Basic auth`);
    }
    this.mode = 'basic';
  }

  headers(): Record<string, string> {
    if (this.mode === 'session' && this.token) return { 'X-Auth-Token': this.token };
    if (this.mode === 'basic' && this.endpoint.username !== undefined && this.endpoint.password !== undefined) {
      return { Authorization: `Basic ${Buffer.from(`${this.endpoint.username}:${this.endpoint.password}`).toString('base64')}` };
    }
    return {};
  }

  /** Deletes the session; errors are swallowed (the run is ending) but reported. */
  async logout(transport: Transport): Promise<void> {
    if (this.mode !== 'session' || !this.token) return;
    const headers = this.headers();
    const url = this.sessionUrl;
    this.token = undefined;
    this.mode = 'none';
    if (!url) return;
    try {
      // One try: at the end of a run an unreachable BMC must not hold the exit up.
      const res = await transport.request('DELETE', url, undefined, headers, 0);
      if (res.status >= 300 && res.status !== 404) this.onLog(`Redfish logout on ${this.endpoint.bmc} answered HTTP ${res.status}`);
    } catch (e) {
      this.onLog(`Redfish logout on ${this.endpoint.bmc} failed: ${(e as Error).message}`);
    }
  }
}
