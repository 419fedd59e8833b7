// The fake BMC's logins: the SessionService (made when a mockup lacks one), session tokens, and
// Basic credentials, as a Redfish service checks them.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { header } from './http.js';
import { BmcHttpError } from './messages.js';
import { etagOf, type Json, odataId, ROOT } from './state.js';

export class BmcSessions {
  /** The Sessions collection's path. */
  readonly path: string;
  private readonly byToken = new Map<string, string>(); // token -> session resource path

  constructor(
    private readonly tree: Map<string, Json>,
    private readonly username: string,
    private readonly password: string,
  ) {
    this.path = ensureSessionService(tree);
  }

  /** Tokens of sessions currently open. */
  tokens(): string[] {
    return [...this.byToken.keys()];
  }

  /** POST to the Sessions collection: a new session, or 401. */
  create(res: ServerResponse, body: Json): void {
    if (body.UserName !== this.username || typeof body.Password !== 'string' || !safeEqual(body.Password, this.password)) {
      throw new BmcHttpError(401, 'NoValidSession', 'There is no valid session established with the implementation.', 'Establish a session before attempting any operations.');
    }
    const token = randomBytes(16).toString('hex');
    const id = randomBytes(6).toString('hex');
    const path = `${this.path}/${id}`;
    const session = { '@odata.id': path, '@odata.type': '#Session.v1_3_0.Session', Id: id, Name: 'User Session', UserName: this.username };
    this.tree.set(path, session);
    const coll = this.tree.get(this.path);
    if (coll && Array.isArray(coll.Members)) {
      coll.Members.push({ '@odata.id': path });
      coll['Members@odata.count'] = coll.Members.length;
    }
    this.byToken.set(token, path);
    res.writeHead(201, { 'X-Auth-Token': token, Location: path, 'Content-Type': 'application/json', ETag: etagOf(session) });
    res.end(JSON.stringify(session));
  }

  /** DELETE of a session resource (logout); false when `path` is no open session. */
  delete(path: string): boolean {
    const token = [...this.byToken.entries()].find(([, p]) => p === path)?.[0];
    if (!token) return false;
    this.byToken.delete(token);
    this.removeMember(path);
    return true;
  }

  /** Forgets every session, as a BMC does on timeout or reboot. */
  expireAll(): void {
    for (const p of this.byToken.values()) this.removeMember(p);
    this.byToken.clear();
  }

  /** Throws 401 unless the request carries a live session token or valid Basic credentials. */
  authenticate(req: IncomingMessage): void {
    const token = header(req, 'x-auth-token');
    if (token && this.byToken.has(token)) return;
    const auth = header(req, 'authorization');
    if (auth?.startsWith('Basic ')) {
      const [u, ...rest] = Buffer.from(auth.slice(6), 'base64').toString('utf8').split(':');
      if (u === this.username && safeEqual(rest.join(':'), this.password)) return;
    }
    throw new BmcHttpError(401, 'InsufficientPrivilege', 'There are insufficient privileges for the account or credentials associated with the current session to perform the requested operation.', 'Log in with valid credentials.', { 'WWW-Authenticate': 'Basic realm="fake-bmc"' });
  }

  private removeMember(member: string): void {
    this.tree.delete(member);
    const coll = this.tree.get(this.path);
    if (coll && Array.isArray(coll.Members)) {
      coll.Members = coll.Members.filter((m) => odataId(m) !== member);
      coll['Members@odata.count'] = (coll.Members as unknown[]).length;
    }
  }
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

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
