// The installer callback endpoint on the run's HTTP server. Each node gets a registration for
// this run: a public id in the URL and a secret token the kickstart carries. The installer POSTs
// `start` (%pre), `end` (%post) or `error` (%onerror, with the tail of its logs as the body) to
// /install/<id>/<status> with the token in the X-Tsbm-Token header. It may also fetch the pull
// secret once (/pull-secret) and ask which disk to install to (/disk, lsblk JSON in, kickstart
// lines out). A wrong token, a repeated status and anything after the last one are refused and
// recorded, so the waiting node can say what it saw; the token is never written anywhere.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FileServer } from './file-server.js';
import { readBody, reply, TokenEntries, TokenEntry } from './token-entries.js';

export const INSTALL_PREFIX = '/install/';
const TOKEN_HEADER = 'x-tsbm-token';
/** The most a callback body (a log tail, lsblk's JSON) may hold. */
export const MAX_CALLBACK_BODY = 256 * 1024;

type InstallStatus = 'start' | 'end' | 'error';
type InstallPhase = 'waiting' | 'started' | 'ended' | 'failed';

interface InstallCallback {
  status: InstallStatus;
  at: number;
  from: string;
  /** The request body as text (error: the installer's log tail). */
  body: string;
}

interface Refused {
  what: string;
  why: 'wrong_token' | 'replayed' | 'out_of_order' | 'too_large' | 'gone';
  at: number;
  from: string;
}

/** What a node's disk question is answered with: kickstart lines, or why no disk fits. */
type DiskAnswer = { ok: true; lines: string; device: string } | { ok: false; message: string };

export interface RegistrationOptions {
  /** The pull secret the installer may fetch once (auth file JSON). */
  pullSecret?: string;
  /** Chooses the install disk from the installer's `lsblk -J -b -O` output. */
  chooseDisk?: (lsblkJson: string) => DiskAnswer;
}

export interface Registration {
  readonly host: string;
  readonly id: string;
  /** Secret: register it for redaction before it goes anywhere. */
  readonly token: string;
  /** `http://host:port/install/<id>`: append /start, /end, /error, /pull-secret, /disk. */
  readonly url: string;
  readonly phase: InstallPhase;
  readonly callbacks: readonly InstallCallback[];
  readonly refused: readonly Refused[];
  /** The disk chosen through /disk, once asked. */
  readonly disk: DiskAnswer | undefined;
  /** Whether the pull secret was handed out. */
  readonly pullSecretFetched: boolean;
  /** Called on every accepted or refused request. */
  onChange(listener: () => void): () => void;
  /** Stops accepting anything for this registration (a new one replaces it). */
  close(): void;
}

class Entry extends TokenEntry implements Registration {
  phase: InstallPhase = 'waiting';
  readonly callbacks: InstallCallback[] = [];
  readonly refused: Refused[] = [];
  disk: DiskAnswer | undefined;
  pullSecretFetched = false;

  constructor(
    host: string,
    id: string,
    token: string,
    url: string,
    private pullSecret: string | undefined,
    readonly chooseDisk: RegistrationOptions['chooseDisk'],
  ) {
    super(host, id, token, url);
  }

  takePullSecret(): string | undefined {
    const s = this.pullSecret;
    this.pullSecret = undefined;
    if (s !== undefined) this.pullSecretFetched = true;
    return s;
  }

  get hasPullSecret(): boolean {
    return this.pullSecret !== undefined;
  }

  override close(): void {
    super.close();
    this.pullSecret = undefined;
  }
}

export class InstallCallbacks {
  private readonly entries = new TokenEntries<Entry>();
  /** Kickstarts served at an operator's fixed path (instance_info.ks_url), by path. */
  private readonly kickstarts = new Map<string, { entry: Entry; text: string }>();

  private constructor(private readonly server: FileServer) {}

  get baseUrl(): string {
    return this.server.url;
  }

  /** The endpoint on this file server (one per server). */
  static attach(server: FileServer): InstallCallbacks {
    const cb = new InstallCallbacks(server);
    server.route(INSTALL_PREFIX, (req, res, path) => cb.handle(req, res, path));
    return cb;
  }

  /**
   * Serves a node's kickstart at a fixed path of this server, for installers whose boot
   * configuration names it (inst.ks=). Only until the installer calls back `start`: the
   * kickstart holds the node's token, and an installer that started has what it needs.
   */
  serveKickstart(path: string, reg: Registration, text: string): void {
    const entry = reg as Entry;
    const first = !this.kickstarts.has(path);
    this.kickstarts.set(path, { entry, text });
    if (!first) return;
    // Exact: a ks_url path never covers published files or the callbacks (a prefix /files did).
    this.server.routeExact(path, async (req, res, got) => {
      req.resume();
      const ks = this.kickstarts.get(got);
      if (!ks) return reply(res, 404, 'not found');
      if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, 'GET only');
      if (ks.entry.closed || ks.entry.phase !== 'waiting') return reply(res, 410, 'this kickstart was already used');
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': String(Buffer.byteLength(ks.text)) });
      res.end(req.method === 'HEAD' ? undefined : ks.text);
    });
  }

  /** A fresh id and token for this host; an earlier registration of the host stops answering. */
  register(host: string, opts: RegistrationOptions = {}): Registration {
    return this.entries.register(host, (id, token) => new Entry(host, id, token, `${this.server.url}${INSTALL_PREFIX}${id}`, opts.pullSecret, opts.chooseDisk));
  }

  /** The live registration of a host in this run. */
  find(host: string): Registration | undefined {
    return this.entries.find(host);
  }

  private async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const m = /^\/install\/([0-9a-f]{24})\/(start|end|error|pull-secret|disk)$/.exec(path);
    const entry = m ? this.entries.byIdOf(m[1]!) : undefined;
    if (!m || !entry) {
      req.resume();
      return reply(res, 404, 'no such installer callback');
    }
    if (req.method !== 'POST') {
      req.resume();
      res.setHeader('Allow', 'POST');
      return reply(res, 405, 'POST only');
    }
    const what = m[2]!;
    const from = req.socket.remoteAddress ?? 'unknown';
    const header = req.headers[TOKEN_HEADER];
    const refuse = (status: number, why: Refused['why'], text: string) => {
      entry.refused.push({ what, why, at: Date.now(), from });
      entry.changed();
      reply(res, status, text);
    };
    if (!entry.tokenMatches(typeof header === 'string' ? header : undefined)) {
      req.resume();
      return refuse(403, 'wrong_token', 'wrong or missing token');
    }
    const body = await readBody(req, MAX_CALLBACK_BODY);
    if (body === undefined) return refuse(413, 'too_large', `body larger than ${MAX_CALLBACK_BODY} bytes`);
    if (entry.closed) return refuse(410, 'gone', 'this registration was replaced');
    const done = entry.phase === 'ended' || entry.phase === 'failed';
    switch (what) {
      case 'start':
        if (entry.phase !== 'waiting') return refuse(409, 'replayed', done ? 'the install already finished' : 'start was already received');
        entry.phase = 'started';
        break;
      case 'end':
        if (done) return refuse(409, 'replayed', 'the install already finished');
        if (entry.phase !== 'started') return refuse(409, 'out_of_order', 'end before start');
        entry.phase = 'ended';
        break;
      case 'error':
        if (done) return refuse(409, 'replayed', 'the install already finished');
        entry.phase = 'failed';
        break;
      case 'pull-secret': {
        if (entry.phase !== 'started') return refuse(409, 'out_of_order', 'the pull secret is handed out between start and end only');
        if (!entry.hasPullSecret) return refuse(410, entry.pullSecretFetched ? 'replayed' : 'gone', entry.pullSecretFetched ? 'the pull secret was already fetched' : 'no pull secret for this node');
        const secret = entry.takePullSecret() ?? '';
        entry.changed();
        res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(secret);
        return;
      }
      case 'disk': {
        if (entry.phase !== 'started') return refuse(409, 'out_of_order', 'the disk is chosen between start and end only');
        const answer = entry.chooseDisk ? entry.chooseDisk(body) : ({ ok: false, message: 'this node has no disk choice here' } as const);
        entry.disk = answer;
        entry.changed();
        if (!answer.ok) return reply(res, 422, answer.message);
        return reply(res, 200, answer.lines);
      }
    }
    entry.callbacks.push({ status: what as InstallStatus, at: Date.now(), from, body });
    entry.changed();
    reply(res, 200, 'ok');
  }
}
