// What the clients of one BMC share for a run: its service root and one login. A BMC serving
// several Systems (a chassis manager, sushy-tools) gets one session, not one per System: BMCs
// cap their sessions, and each login is a round trip. Each client keeps its own connection.
import type { RedfishEndpoint } from './endpoint.js';
import { Auth } from './session.js';
import type { Json, RedfishResponse, Transport } from './transport.js';

export class BmcSession {
  readonly auth: Auth;
  private root: Json | undefined;
  private connecting: Promise<Json> | undefined;
  private users = 0;

  constructor(
    readonly endpoint: RedfishEndpoint,
    onSecret: (value: string) => void,
    onLog: (message: string) => void,
    /** Skip SessionService and use Basic auth. */
    readonly basicAuth = false,
    onWarn?: (message: string) => void,
  ) {
    if (endpoint.password) onSecret(endpoint.password);
    if (endpoint.verifyCa === false && endpoint.baseUrl.startsWith('https:')) {
      onWarn?.(`TLS certificate verification is off for BMC ${endpoint.bmc} (redfish_verify_ca: false); anyone on the path can impersonate it`);
    }
    this.auth = new Auth(endpoint, onSecret, onLog);
  }

  /** A client starts using the session (logout waits for the last one to close). */
  join(): void {
    this.users++;
  }

  /**
   * Reads the service root (no auth needed by the spec) and logs in, once for all clients,
   * through the connection of whichever client asks first. `check` throws for a bad answer.
   */
  connect(transport: Transport, check: (res: RedfishResponse) => Json): Promise<Json> {
    this.connecting ??= (async () => {
      const res = await transport.request('GET', '/redfish/v1/');
      // some BMCs protect even the root: log in first, then read it
      let root = res.status === 401 ? {} : check(res);
      await this.auth.login(transport, root, this.basicAuth);
      if (res.status === 401) root = check(await transport.request('GET', '/redfish/v1/', undefined, this.auth.headers()));
      this.root = root;
      return root;
    })().catch((e: unknown) => {
      this.connecting = undefined;
      throw e;
    });
    return this.connecting;
  }

  get serviceRoot(): Json {
    return this.root ?? {};
  }

  /** After a 401: one fresh login for everyone, unless another client already made it. */
  relogin(transport: Transport, staleHeaders: Record<string, string>): Promise<void> {
    return this.auth.refresh(transport, this.root ?? {}, staleHeaders, this.auth.kind === 'basic' || this.basicAuth);
  }

  /** A client is done; the last one logs out through its own connection. */
  async leave(transport: Transport): Promise<void> {
    this.users--;
    if (this.users > 0) return;
    if (this.connecting) await this.connecting.catch(() => undefined);
    await this.auth.logout(transport);
  }
}
