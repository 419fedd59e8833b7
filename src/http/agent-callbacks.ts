// The ramdisk callback endpoint on the run's HTTP server ("nodes call home", as Ironic's agent
// looks up its node). ramdisk_media registers a node for this run: a public id in the URL and a
// secret token on the node's own volume. The ramdisk POSTs one JSON report to /agent/<id> with
// the token in the X-Tsbm-Token header: its system UUID, its SSH host keys (made at this boot)
// and `ip -j addr`. wait_agent then connects to a reported address and accepts only a reported
// key. A wrong token or a body that is not a report is refused and recorded; the token is never
// written anywhere.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FileServer } from './file-server.js';
import { readBody, reply, TokenEntries, TokenEntry } from './token-entries.js';

const AGENT_PREFIX = '/agent/';
const TOKEN_HEADER = 'x-tsbm-token';
const MAX_REPORT = 64 * 1024;

export interface AgentAddress {
  interface: string;
  mac: string | undefined;
  family: 4 | 6;
  address: string;
  prefix: number;
}

export interface AgentReport {
  at: number;
  from: string;
  systemUuid: string | undefined;
  /** `TYPE BASE64` lines, as in authorized_keys and known_hosts. */
  hostKeys: string[];
  /** Global-scope addresses, IPv4 first, in the order the ramdisk listed them. */
  addresses: AgentAddress[];
  macs: string[];
}

interface Refused {
  why: 'wrong_token' | 'bad_report' | 'too_large' | 'gone';
  at: number;
  from: string;
  detail: string;
}

export interface AgentRegistration {
  readonly host: string;
  readonly id: string;
  /** Secret: register it for redaction before it goes anywhere. */
  readonly token: string;
  readonly url: string;
  /** The latest accepted report (a ramdisk that rebooted within the run reports again). */
  readonly report: AgentReport | undefined;
  readonly refused: readonly Refused[];
  onChange(listener: () => void): () => void;
  close(): void;
}

class Entry extends TokenEntry implements AgentRegistration {
  report: AgentReport | undefined;
  readonly refused: Refused[] = [];
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const KEY_LINE = /^(ssh-ed25519|ecdsa-sha2-nistp(256|384|521)|ssh-rsa) [A-Za-z0-9+/]+={0,2}$/;

/** A report's JSON as the ramdisk's call-home script sends it; a string says what is wrong. */
export function parseAgentReport(body: string, from: string): Omit<AgentReport, 'at'> | string {
  let j: unknown;
  try {
    j = JSON.parse(body);
  } catch {
    return 'the body is not JSON';
  }
  if (!isObj(j) || j.version !== 1) return 'not a version 1 report';
  const uuid = typeof j.system_uuid === 'string' && j.system_uuid ? j.system_uuid : undefined;
  const hostKeys = Array.isArray(j.host_keys) ? j.host_keys.filter((k): k is string => typeof k === 'string' && KEY_LINE.test(k.trim())).map((k) => k.trim()) : [];
  if (!hostKeys.length) return 'no SSH host key in the report';
  if (!Array.isArray(j.ip_addr)) return 'no ip_addr (ip -j addr) in the report';
  const addresses: AgentAddress[] = [];
  const macs: string[] = [];
  for (const link of j.ip_addr) {
    if (!isObj(link) || typeof link.ifname !== 'string' || link.link_type === 'loopback') continue;
    const mac = typeof link.address === 'string' && /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i.test(link.address) ? link.address.toLowerCase() : undefined;
    if (mac) macs.push(mac);
    for (const a of Array.isArray(link.addr_info) ? link.addr_info : []) {
      if (!isObj(a) || a.scope !== 'global' || typeof a.local !== 'string') continue;
      const family = a.family === 'inet' ? 4 : a.family === 'inet6' ? 6 : undefined;
      if (!family) continue;
      addresses.push({ interface: link.ifname, mac, family, address: a.local, prefix: Number(a.prefixlen) });
    }
  }
  addresses.sort((a, b) => a.family - b.family);
  return { from, systemUuid: uuid, hostKeys, addresses, macs };
}

export class AgentCallbacks {
  private readonly entries = new TokenEntries<Entry>();

  private constructor(private readonly server: FileServer) {}

  static attach(server: FileServer): AgentCallbacks {
    const cb = new AgentCallbacks(server);
    server.route(AGENT_PREFIX, (req, res, path) => cb.handle(req, res, path));
    return cb;
  }

  /** A fresh id and token for this host; an earlier registration of the host stops answering. */
  register(host: string): AgentRegistration {
    return this.entries.register(host, (id, token) => new Entry(host, id, token, `${this.server.url}${AGENT_PREFIX}${id}`));
  }

  /** The live registration of a host in this run. */
  find(host: string): AgentRegistration | undefined {
    return this.entries.find(host);
  }

  private async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const m = /^\/agent\/([0-9a-f]{24})$/.exec(path);
    const entry = m ? this.entries.byIdOf(m[1]!) : undefined;
    if (!entry) {
      req.resume();
      return reply(res, 404, 'no such ramdisk callback');
    }
    if (req.method !== 'POST') {
      req.resume();
      res.setHeader('Allow', 'POST');
      return reply(res, 405, 'POST only');
    }
    const from = req.socket.remoteAddress ?? 'unknown';
    const refuse = (status: number, why: Refused['why'], detail: string) => {
      entry.refused.push({ why, at: Date.now(), from, detail });
      entry.changed();
      reply(res, status, detail);
    };
    const header = req.headers[TOKEN_HEADER];
    if (!entry.tokenMatches(typeof header === 'string' ? header : undefined)) {
      req.resume();
      return refuse(403, 'wrong_token', 'wrong or missing token');
    }
    const body = await readBody(req, MAX_REPORT);
    if (body === undefined) return refuse(413, 'too_large', `body larger than ${MAX_REPORT} bytes`);
    if (entry.closed) return refuse(410, 'gone', 'this registration was replaced');
    const report = parseAgentReport(body, from);
    if (typeof report === 'string') return refuse(400, 'bad_report', report);
    entry.report = { ...report, at: Date.now() };
    entry.changed();
    reply(res, 200, 'ok');
  }
}
