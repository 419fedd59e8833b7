// The fake BMC: HTTPS serving a Redfish mockup tree with state, auth, sessions, ETags,
// task monitors and fault injection. Used by tests and by the simulated lab (`tsbm sim`).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { prepareAction } from './actions.js';
import { expandResource } from './expand.js';
import { type BmcFaults, FaultInjector } from './faults.js';
import { BmcHttpError, errorBody } from './messages.js';
import { applyPatch, checkIfMatch } from './patch.js';
import { loadProfile } from './profile.js';
import { type BootInfo, type PowerDelay, etagOf, FakeBmcState, taggedJson, findAction, type Json, loadTree, normPath, odataId, ROOT } from './state.js';
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
  hooks?: { onPower?(state: 'On' | 'Off', system: string): void; onBoot?(info: BootInfo, system: string): void };
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

interface Task {
  pollsLeft: number;
  apply: () => void;
  done: boolean;
}

export async function startFakeBmc(opts: FakeBmcOptions): Promise<FakeBmc> {
  const host = opts.host ?? '127.0.0.1';
  const username = opts.username ?? 'admin';
  const password = opts.password ?? 'password';
  const tree = await loadTree(opts.mockupDir);
  const state = new FakeBmcState(tree, opts.powerDelayMs ?? 0, opts.hooks);
  const faults = new FaultInjector(opts.faults);
  const profile = loadProfile(opts.mockupDir);
  const emptyImage = [...tree.values()].some((b) => b.Image === '') ? '' : null;
  const sessionsPath = ensureSessionService(tree);
  const sessions = new Map<string, string>(); // token -> session resource path
  const tasks = new Map<string, Task>();
  const counts = new Map<string, number>();
  /** Every request's method and path, for requestCount by path. */
  const seen: string[] = [];
  let nextId = 1;
  let inFlight = 0;
  let peak = 0;
  const { certPem, keyPem, caPem } = await selfSignedCert(host);

  let insertDropped = false;
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    counts.set(method, (counts.get(method) ?? 0) + 1);
    seen.push(`${method} ${req.url ?? ''}`);
    const raw = await readBody(req);
    if (opts.faults?.latencyMs) await new Promise((r) => setTimeout(r, opts.faults?.latencyMs));
    const fault = faults.next();
    if (fault === 'reset') {
      req.socket.destroy();
      return;
    }
    if (fault === '503') {
      const retry = String(opts.faults?.retryAfterS ?? 0);
      throw new BmcHttpError(503, 'ServiceTemporarilyUnavailable', 'The service is temporarily unavailable.', 'Wait and retry.', { 'Retry-After': retry });
    }
    const url = new URL(req.url ?? '/', 'https://bmc');
    const path = normPath(url.pathname);
    if (opts.faults?.dropInsertMedia && !insertDropped && method === 'POST' && path.endsWith('/VirtualMedia.InsertMedia')) {
      insertDropped = true;
      if (opts.faults.dropInsertMedia === 'before') {
        req.socket.destroy();
        return;
      }
      // Acts on it, then the connection drops instead of the answer.
      res.end = (() => {
        req.socket.destroy();
        return res;
      }) as typeof res.end;
    }
    let body: Json = {};
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw) as Json;
      } catch {
        throw new BmcHttpError(400, 'MalformedJSON', 'The request body submitted was malformed JSON and could not be parsed by the receiving service.');
      }
    }
    if (path === '/redfish' && method === 'GET') return send(res, 200, { v1: '/redfish/v1/' });
    if (path === ROOT && method === 'GET') return sendResource(res, tree.get(ROOT) ?? {});
    if (path === sessionsPath && method === 'POST') {
      if (opts.sessions === false) throw new BmcHttpError(405, 'OperationNotAllowed', 'Sessions are disabled on this service.');
      return createSession(res, body);
    }
    authenticate(req);
    if (method === 'GET') {
      const task = tasks.get(path);
      if (task) return pollTask(res, task);
      const r = tree.get(path);
      if (!r) throw notFound(path);
      const expand = url.searchParams.get('$expand'); // decoded: `%24expand=.%28...` works too
      if (expand === null || opts.faults?.expandQuery === 'ignored') return sendResource(res, r);
      if (opts.faults?.expandQuery === 'refused' || opts.faults?.expandQuery === 'unimplemented') {
        throw new BmcHttpError(opts.faults.expandQuery === 'refused' ? 400 : 501, 'QueryNotSupported', 'Querying is not supported by the implementation.');
      }
      return sendResource(res, expandResource(tree, r, expand));
    }
    if (method === 'DELETE') {
      const token = [...sessions.entries()].find(([, p]) => p === path)?.[0];
      if (!token) throw notFound(path);
      sessions.delete(token);
      removeMember(sessionsPath, path);
      res.writeHead(204).end();
      return;
    }
    if (method === 'PATCH') {
      const r = tree.get(path);
      if (!r) throw notFound(path);
      checkIfMatch(r, header(req, 'if-match'), opts.requireEtag ?? false);
      const own = profile?.patch?.(r, body);
      if (own) {
        res.writeHead(own.status, { 'Content-Type': own.contentType, 'OData-Version': '4.0' }).end(own.body);
        return;
      }
      applyPatch(r, body, { ignoreBootOverride: opts.faults?.ignoreBootOverride, onceReadsContinuous: opts.faults?.onceReadsContinuous, emptyImage });
      return sendResource(res, r);
    }
    if (method === 'POST') {
      const ref = findAction(tree, path);
      if (!ref) throw notFound(path);
      const apply = prepareAction(state, ref, body, emptyImage, opts.faults ?? {});
      if (opts.asyncTasks || opts.faults?.stuckTaskMonitor) {
        const monitor = `${ROOT}/TaskService/TaskMonitors/${nextId++}`;
        tasks.set(monitor, { pollsLeft: opts.taskPolls ?? 1, apply, done: false });
        res.writeHead(202, { Location: monitor, 'Retry-After': '0', 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ '@odata.id': monitor, TaskState: 'Running' }));
        return;
      }
      apply();
      res.writeHead(204).end();
      return;
    }
    throw new BmcHttpError(405, 'OperationNotAllowed', `The HTTP method ${method} is not allowed on ${path}.`);
  }

  function pollTask(res: ServerResponse, task: Task): void {
    if (opts.faults?.stuckTaskMonitor || task.pollsLeft > 0) {
      task.pollsLeft--;
      res.writeHead(202, { 'Retry-After': '0', 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ TaskState: 'Running', PercentComplete: 50 }));
      return;
    }
    if (!task.done) {
      task.done = true;
      task.apply();
    }
    send(res, 200, { TaskState: 'Completed', TaskStatus: 'OK', Messages: [] });
  }

  /** Throws 401 unless the request carries a live session token or valid Basic credentials. */
  function authenticate(req: IncomingMessage): void {
    const token = header(req, 'x-auth-token');
    if (token && sessions.has(token)) return;
    const auth = header(req, 'authorization');
    if (auth?.startsWith('Basic ')) {
      const [u, ...rest] = Buffer.from(auth.slice(6), 'base64').toString('utf8').split(':');
      if (u === username && safeEqual(rest.join(':'), password)) return;
    }
    throw new BmcHttpError(401, 'InsufficientPrivilege', 'There are insufficient privileges for the account or credentials associated with the current session to perform the requested operation.', 'Log in with valid credentials.', { 'WWW-Authenticate': 'Basic realm="fake-bmc"' });
  }

  function createSession(res: ServerResponse, body: Json): void {
    if (body.UserName !== username || typeof body.Password !== 'string' || !safeEqual(body.Password, password)) {
      throw new BmcHttpError(401, 'NoValidSession', 'There is no valid session established with the implementation.', 'Establish a session before attempting any operations.');
    }
    const token = randomBytes(16).toString('hex');
    const id = randomBytes(6).toString('hex');
    const path = `${sessionsPath}/${id}`;
    const session = { '@odata.id': path, '@odata.type': '#Session.v1_3_0.Session', Id: id, Name: 'User Session', UserName: username };
    tree.set(path, session);
    const coll = tree.get(sessionsPath);
    if (coll && Array.isArray(coll.Members)) {
      coll.Members.push({ '@odata.id': path });
      coll['Members@odata.count'] = coll.Members.length;
    }
    sessions.set(token, path);
    res.writeHead(201, { 'X-Auth-Token': token, Location: path, 'Content-Type': 'application/json', ETag: etagOf(session) });
    res.end(JSON.stringify(session));
  }

  function removeMember(collection: string, member: string): void {
    tree.delete(member);
    const coll = tree.get(collection);
    if (coll && Array.isArray(coll.Members)) {
      coll.Members = coll.Members.filter((m) => odataId(m) !== member);
      coll['Members@odata.count'] = (coll.Members as unknown[]).length;
    }
  }

  const sockets = new Set<Socket>();
  const server: Server = createServer({ cert: certPem, key: keyPem }, (req, res) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    res.on('close', () => inFlight--);
    handle(req, res).catch((e: unknown) => {
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
    openSessions: () => [...sessions.keys()],
    maxConcurrent: () => peak,
    connectionCount: () => accepted,
    expireSessions: () => {
      for (const p of sessions.values()) removeMember(sessionsPath, p);
      sessions.clear();
    },
    requests: () => [...seen],
    requestCount: (m, pathPart) =>
      pathPart !== undefined
        ? seen.filter((r) => (!m || r.startsWith(`${m} `)) && r.includes(pathPart)).length
        : m
          ? (counts.get(m) ?? 0)
          : [...counts.values()].reduce((a, b) => a + b, 0),
    close: async () => {
      state.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function ensureSessionService(tree: Map<string, Json>): string {
  const root = tree.get(ROOT) ?? {};
  const svcPath = odataId(root.SessionService) ?? `${ROOT}/SessionService`;
  const links = root.Links as Json | undefined;
  const sessionsPath = odataId(links?.Sessions) ?? `${svcPath}/Sessions`;
  if (!tree.has(svcPath)) {
    tree.set(svcPath, {
      '@odata.id': svcPath,
      '@odata.type': '#SessionService.v1_1_8.SessionService',
      Id: 'SessionService',
      Name: 'Session Service',
      ServiceEnabled: true,
      SessionTimeout: 1800,
      Sessions: { '@odata.id': sessionsPath },
    });
  }
  if (!tree.has(sessionsPath)) {
    tree.set(sessionsPath, {
      '@odata.id': sessionsPath,
      '@odata.type': '#SessionCollection.SessionCollection',
      Name: 'Session Collection',
      Members: [],
      'Members@odata.count': 0,
    });
  }
  return sessionsPath;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function notFound(path: string): BmcHttpError {
  return new BmcHttpError(404, 'ResourceMissingAtURI', `The resource at the URI ${path} was not found.`, 'Place a valid resource at the URI or correct the URI and resubmit the request.');
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'OData-Version': '4.0', ...headers });
  res.end(text);
}

function sendResource(res: ServerResponse, r: Json): void {
  // One JSON.stringify for both the tag and the body (a mockup's System is tens of KiB).
  const { text, etag } = taggedJson(r);
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'OData-Version': '4.0', ETag: etag });
  res.end(text);
}
