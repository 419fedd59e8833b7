// The fake BMC: HTTPS serving a Redfish mockup tree (redfish-handler.ts: state, logins, ETags,
// task monitors) with faults as a layer around it (fault-layer.ts). Used by tests and by the
// simulated lab (`tsbm sim`). This file puts them together and counts what clients asked.
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { withFaults } from './fault-layer.js';
import type { BmcFaults } from './faults.js';
import { readBody, send } from './http.js';
import { BmcHttpError, errorBody } from './messages.js';
import { loadProfile } from './profile.js';
import { redfishHandler } from './redfish-handler.js';
import { RequestLog } from './request-log.js';
import { BmcSessions } from './sessions.js';
import { FakeBmcState, loadTree, type PowerDelay, type StateHooks } from './state.js';
import { TaskMonitors } from './tasks.js';
import { selfSignedCert } from './tls.js';

export interface FakeBmcOptions {
  mockupDir: string;
  host?: string;
  port?: number;
  username?: string;
  password?: string;
  /** false: the SessionService refuses logins (405), as on BMCs with sessions disabled; clients must use Basic. */
  sessions?: boolean;
  /** PATCH without a matching If-Match is refused with 412. */
  requireEtag?: boolean;
  /**
   * How long PoweringOn/PoweringOff lasts (default 0: immediate); a function is asked at every
   * transition (a BMC whose power changes take a different time each time).
   */
  powerDelayMs?: PowerDelay;
  /** Actions answer 202 with a task monitor that completes after `taskPolls` polls. */
  asyncTasks?: boolean;
  taskPolls?: number;
  faults?: BmcFaults;
  /** Per System (its path as the second argument): a BMC managing several runs one machine each. */
  hooks?: StateHooks;
}

export interface FakeBmc {
  url: string;
  host: string;
  port: number;
  caCertPem: string;
  state: FakeBmcState;
  /** Tokens of sessions currently open (tests assert logout). */
  openSessions(): string[];
  /** Most requests the BMC was handling at once (real BMCs cope badly with more than one). */
  maxConcurrent(): number;
  /** TLS connections accepted so far (each one a handshake). */
  connectionCount(): number;
  /** Forgets every session, as a BMC does on timeout or reboot (clients must log in again). */
  expireSessions(): void;
  /** Number of requests received, by method, and only those whose path and query contain `pathPart` when given. */
  requestCount(method?: string, pathPart?: string): number;
  /** Every request received so far, as `METHOD /path?query`, in order. */
  requests(): string[];
  close(): Promise<void>;
}

export async function startFakeBmc(opts: FakeBmcOptions): Promise<FakeBmc> {
  const host = opts.host ?? '127.0.0.1';
  const tree = await loadTree(opts.mockupDir);
  const state = new FakeBmcState(tree, opts.powerDelayMs ?? 0, opts.hooks);
  const sessions = new BmcSessions(tree, opts.username ?? 'admin', opts.password ?? 'password');
  const quirks = opts.faults ?? {};
  const handler = withFaults(
    redfishHandler({
      tree,
      state,
      sessions,
      sessionsEnabled: opts.sessions !== false,
      requireEtag: opts.requireEtag ?? false,
      asyncTasks: opts.asyncTasks === true || quirks.stuckTaskMonitor === true,
      tasks: new TaskMonitors(opts.taskPolls ?? 1, quirks.stuckTaskMonitor === true),
      quirks,
      profile: loadProfile(opts.mockupDir),
    }),
    opts.faults,
  );
  const log = new RequestLog();
  const { certPem, keyPem, caPem } = await selfSignedCert(host);

  const sockets = new Set<Socket>();
  const server: Server = createServer({ cert: certPem, key: keyPem }, (req, res) => {
    const method = req.method ?? 'GET';
    res.on('close', log.record(method, req.url ?? ''));
    readBody(req)
      .then((raw) => handler({ req, method, url: new URL(req.url ?? '/', 'https://bmc'), raw }, res))
      .catch((e: unknown) => {
        if (res.headersSent || res.destroyed) return;
        if (e instanceof BmcHttpError) {
          send(res, e.status, errorBody(e.status, e.messageId, e.message, e.resolution), e.headers);
        } else {
          send(res, 500, errorBody(500, 'InternalError', e instanceof Error ? e.message : String(e)));
        }
      });
  });
  let accepted = 0;
  server.on('secureConnection', (s) => {
    accepted++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('tlsClientError', () => {}); // clients refusing our self-signed certificate is expected
  // Node's default of 5 s closes a deploy's connection between its power-on and its eject: at
  // a thousand nodes that is a thousand more TLS handshakes on both sides. BMCs differ here
  // anyway; a minute keeps one connection per run.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `https://${urlHost}:${port}`,
    host,
    port,
    caCertPem: caPem,
    state,
    openSessions: () => sessions.tokens(),
    maxConcurrent: () => log.peak(),
    connectionCount: () => accepted,
    expireSessions: () => sessions.expireAll(),
    requests: () => log.requests(),
    requestCount: (m, pathPart) => log.count(m, pathPart),
    close: async () => {
      state.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

