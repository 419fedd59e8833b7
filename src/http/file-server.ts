// The built-in HTTP file server: serves local files (ramdisk ISOs, cached images) to BMCs and
// ramdisks. GET with byte ranges, HEAD; nothing else. Anyone on the network can reach it, so
// each published file's URL carries a random token made for this run (not derived from the
// file), and the file is pinned when published (see pinned-file.ts): a path re-pointed later
// serves nothing.
import { createReadStream } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { basename, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openPinned, type PinnedFile, pinFile, stillPinned } from './pinned-file.js';
import { isUnspecifiedAddress } from './bind-address.js';
import { optionsError } from '../errors.js';

export interface FileServerOptions {
  /** Address to bind and advertise (must be reachable by the BMCs). Default 127.0.0.1. */
  host?: string;
  /** Default 0: an ephemeral port. */
  port?: number;
}

export interface FileServer {
  /** `http://host:port` */
  url: string;
  /**
   * Makes `file` downloadable as it is now (real path, device and inode); returns its URL, the
   * same one for the same unchanged file during this server's life.
   */
  publish(file: string): Promise<string>;
  /** Number of requests served, for tests and progress. */
  readonly requests: number;
  /**
   * Hands requests whose path starts with `prefix` (e.g. `/install/`, ending in "/") to `handler`
   * instead of the file table: endpoints other parts of tsbm serve on the same address
   * (installer callbacks). A prefix that would cover published files or another route is refused.
   */
  route(prefix: string, handler: RouteHandler): void;
  /**
   * Hands requests for exactly `path` to `handler` (a kickstart at an operator's ks_url). Exact,
   * so no path can shadow published files or other routes; one under `/files/` or under a prefix
   * route, or one already taken, is refused.
   */
  routeExact(path: string, handler: RouteHandler): void;
  close(): Promise<void>;
}

type RouteHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;

/** Where published files live: no route may cover or sit under it. */
export const FILES_PREFIX = '/files/';

export interface ByteRange {
  start: number;
  end: number; // inclusive
}

/** Parses a single `bytes=` range; 'invalid' for unsatisfiable, undefined for none/multi-range. */
export function parseRange(header: string | undefined, size: number): ByteRange | 'invalid' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return undefined; // multi-range or junk: serve the whole file, as the RFC allows
  const [, a = '', b = ''] = m;
  if (a === '' && b === '') return 'invalid';
  let start: number;
  let end: number;
  if (a === '') {
    const suffix = Number(b);
    if (suffix === 0) return 'invalid';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(a);
    end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  }
  if (start >= size || start > end) return 'invalid';
  return { start, end };
}

export async function startFileServer(opts: FileServerOptions = {}): Promise<FileServer> {
  const host = opts.host ?? '127.0.0.1';
  const files = new Map<string, PinnedFile>(); // url path -> the file as published
  const byFile = new Map<string, string>(); // path as given -> url path
  const sockets = new Set<Socket>();
  const routes: [string, RouteHandler][] = [];
  const exactRoutes = new Map<string, RouteHandler>();
  let requests = 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    requests++;
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const exact = exactRoutes.get(path);
    if (exact) return exact(req, res, path);
    const route = routes.find(([prefix]) => path.startsWith(prefix));
    if (route) return route[1](req, res, path);
    const file = files.get(path);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    if (!file) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    // Opened by the path published, checked against the pin; a file that changed identity is gone.
    const opened = await openPinned(file);
    if (!opened) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    const { fd, st } = opened;
    let handedOff = false;
    try {
      const headers: Record<string, string> = {
        'Accept-Ranges': 'bytes',
        'Content-Type': file.real.endsWith('.iso') ? 'application/x-iso9660-image' : 'application/octet-stream',
        'Last-Modified': st.mtime.toUTCString(),
      };
      const range = parseRange(req.headers.range, st.size);
      if (range === 'invalid') {
        res.writeHead(416, { ...headers, 'Content-Range': `bytes */${st.size}` }).end();
        return;
      }
      const start = range?.start ?? 0;
      const end = range?.end ?? st.size - 1;
      headers['Content-Length'] = String(st.size === 0 ? 0 : end - start + 1);
      if (range) headers['Content-Range'] = `bytes ${start}-${end}/${st.size}`;
      res.writeHead(range ? 206 : 200, headers);
      if (req.method === 'HEAD' || st.size === 0) {
        res.end();
        return;
      }
      const stream = createReadStream('', { fd, start, end, autoClose: true });
      handedOff = true;
      stream.on('error', () => res.destroy());
      res.on('close', () => stream.destroy());
      stream.pipe(res);
    } finally {
      if (!handedOff) await fd.close();
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port ?? 0, host, () => ok());
  });
  const bound = server.address() as AddressInfo;
  // A name that resolves to the unspecified address (a hosts entry) binds every address too.
  if (isUnspecifiedAddress(bound.address)) {
    await new Promise<void>((ok) => server.close(() => ok()));
    throw optionsError(`tsbm_http_address ${host} resolves to ${bound.address}, a wildcard (it binds every address)`, 'set tsbm_http_address to the one controller address the BMCs and ramdisks reach');
  }
  const port = bound.port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    url,
    get requests() {
      return requests;
    },
    route(prefix: string, handler: RouteHandler): void {
      const clash = [FILES_PREFIX, ...routes.map(([p]) => p), ...exactRoutes.keys()].find((p) => p.startsWith(prefix) || prefix.startsWith(p));
      if (!prefix.startsWith('/') || !prefix.endsWith('/') || prefix === '/' || clash) {
        throw new Error(`route ${prefix} would ${clash ? `overlap ${clash}` : 'not be a path prefix ending in /'}`);
      }
      routes.push([prefix, handler]);
    },
    routeExact(path: string, handler: RouteHandler): void {
      const under = [FILES_PREFIX, ...routes.map(([p]) => p)].find((p) => path.startsWith(p));
      if (!path.startsWith('/') || path === '/' || under || exactRoutes.has(path)) {
        throw new Error(`path ${path} ${under ? `is under ${under}, which tsbm serves itself` : exactRoutes.has(path) ? 'is taken' : 'is not a path of its own'}`);
      }
      exactRoutes.set(path, handler);
    },
    async publish(file: string): Promise<string> {
      const abs = resolve(file);
      const known = byFile.get(abs);
      const pinned = known ? files.get(known) : undefined;
      if (known && pinned && (await stillPinned(pinned))) return `${url}${encodeURI(known)}`;
      const pin = await pinFile(abs);
      // Random, per run: nobody can compute a URL from a file's name, size or time.
      const p = `${FILES_PREFIX}${randomBytes(16).toString('hex')}/${basename(abs)}`;
      if (known) files.delete(known);
      byFile.set(abs, p);
      files.set(p, pin);
      return `${url}${encodeURI(p)}`;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}
