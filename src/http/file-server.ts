// The built-in HTTP file server: serves local files (ramdisk ISOs, later cached images) to
// BMCs and ramdisks under unguessable URLs. GET with byte ranges, HEAD; nothing else.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { basename, resolve } from 'node:path';
import { createHash } from 'node:crypto';

export interface FileServerOptions {
  /** Address to bind and advertise (must be reachable by the BMCs). Default 127.0.0.1. */
  host?: string;
  /** Default 0: an ephemeral port. */
  port?: number;
}

export interface FileServer {
  /** `http://host:port` */
  url: string;
  /** Makes `file` downloadable; returns its URL (the same URL for the same file). */
  publish(file: string): Promise<string>;
  /** Number of requests served, for tests and progress. */
  readonly requests: number;
  /**
   * Hands requests whose path starts with `prefix` (e.g. `/install/`) to `handler` instead of
   * the file table: endpoints other parts of tsbm serve on the same address (installer callbacks).
   */
  route(prefix: string, handler: RouteHandler): void;
  close(): Promise<void>;
}

export type RouteHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;

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
  const files = new Map<string, string>(); // url path -> absolute file
  const byFile = new Map<string, string>();
  const sockets = new Set<Socket>();
  const routes: [string, RouteHandler][] = [];
  let requests = 0;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    requests++;
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
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
    const st = await stat(file);
    const headers: Record<string, string> = {
      'Accept-Ranges': 'bytes',
      'Content-Type': file.endsWith('.iso') ? 'application/x-iso9660-image' : 'application/octet-stream',
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
    const stream = createReadStream(file, { start, end });
    stream.on('error', () => res.destroy());
    stream.pipe(res);
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
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    url,
    get requests() {
      return requests;
    },
    route(prefix: string, handler: RouteHandler): void {
      routes.push([prefix, handler]);
    },
    async publish(file: string): Promise<string> {
      const abs = resolve(file);
      const st = await stat(abs);
      if (!st.isFile()) throw new Error(`${abs} is not a regular file`);
      let p = byFile.get(abs);
      if (!p) {
        // Unguessable but stable for the same file, so a re-run finds the same URL inserted.
        const token = createHash('sha256').update(`${abs}\0${st.size}\0${st.mtimeMs}`).digest('hex').slice(0, 24);
        p = `/files/${token}/${basename(abs)}`;
        byFile.set(abs, p);
        files.set(p, abs);
      }
      return `${url}${encodeURI(p)}`;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}
