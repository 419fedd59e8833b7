// Controller-side downloads (the image cache, a config drive URL) against servers on loopback
// that misbehave: an https URL redirected to plain http is refused before the http server hears
// of it, a server that stalls is dropped after the idle timeout, the whole download has a
// deadline, and the size is capped as the bytes arrive.
import { statSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveConfigDrive } from '../../src/configdrive/source.js';
import { downloadWithResume } from '../../src/images/download.js';
import { selfSignedCert } from '../../packages/lab/src/bmc/tls.js';
import { MIB } from '../../src/util/limits.js';
import { scratchDirs } from '../helpers/scratch.js';

const scratch = scratchDirs();
const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c();
});

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function serve(handler: Handler, tls = false): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  const wrapped: Handler = (req, res) => {
    hits.push(req.url ?? '');
    handler(req, res);
  };
  const server = tls ? createHttps({ key: (await selfSignedCert()).keyPem, cert: (await selfSignedCert()).certPem }, wrapped) : createHttp(wrapped);
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  open.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return { url: `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

const dl = (url: string, extra: Partial<Parameters<typeof downloadWithResume>[2]> = {}) =>
  downloadWithResume(url, join(scratch('tsbm-dl-'), 'img.part'), { algo: 'sha256', tlsVerify: false, retries: 0, ...extra });

describe('image cache download', () => {
  it('an https URL redirected to plain http is refused; the http server never hears of it', async () => {
    const plain = await serve((_q, res) => res.end('image bytes'));
    const secure = await serve((_q, res) => res.writeHead(302, { Location: `${plain.url}/img` }).end(), true);
    await expect(dl(`${secure.url}/img`)).rejects.toThrow(/redirected from https to plain http \(http:\/\/127\.0\.0\.1:\d+\); refused/);
    expect(plain.hits).toEqual([]);
    // https → https and http → http redirects are still followed.
    const secure2 = await serve((req, res) => (req.url === '/a' ? res.writeHead(301, { Location: '/b' }).end() : res.end('ok')), true);
    expect((await dl(`${secure2.url}/a`)).size).toBe(2);
  });

  it('a server that stops sending is dropped after the idle timeout', async () => {
    const stall = await serve((_q, res) => {
      res.writeHead(200, { 'Content-Length': '1000' });
      res.write('x'.repeat(10)); // then nothing, forever
    });
    await expect(dl(`${stall.url}/img`, { idleMs: 400 })).rejects.toThrow(/the image server sent nothing for 400 ms/);
  });

  it('the whole download has a deadline, even when bytes keep trickling in', async () => {
    const drip = await serve((_q, res) => {
      res.writeHead(200, { 'Content-Length': '100000' });
      const t = setInterval(() => res.write('x'), 50);
      res.on('close', () => clearInterval(t));
    });
    await expect(dl(`${drip.url}/img`, { idleMs: 2000, timeoutMs: 600 })).rejects.toThrow(/the download did not finish within 600 ms/);
  });

  it('stops at tsbm_max_download: by Content-Length before reading, and while reading when none is given', async () => {
    const declared = await serve((_q, res) => {
      res.writeHead(200, { 'Content-Length': String(10 * MIB) });
      res.end(Buffer.alloc(10 * MIB));
    });
    await expect(dl(`${declared.url}/img`, { maxBytes: 1 * MIB })).rejects.toThrow(/larger than 1 MiB; refused \(raise tsbm_max_download/);
    const dir = scratch('tsbm-dl-');
    const endless = await serve((_q, res) => {
      res.writeHead(200); // chunked, no length
      const block = Buffer.alloc(64 * 1024);
      const pump = () => {
        while (res.write(block)) {}
        res.once('drain', pump);
      };
      res.on('close', () => res.removeAllListeners('drain'));
      pump();
    });
    const part = join(dir, 'img.part');
    await expect(downloadWithResume(`${endless.url}/img`, part, { algo: 'sha256', tlsVerify: false, retries: 0, maxBytes: 2 * MIB })).rejects.toThrow(
      /larger than 2 MiB/,
    );
    expect(statSync(part).size).toBeLessThanOrEqual(2 * MIB);
  });
});

describe('config drive URL download', () => {
  const node = { name: 'n', uuid: 'u' };

  it('an https URL redirected to plain http is refused', async () => {
    const plain = await serve((_q, res) => res.end('data'));
    const secure = await serve((_q, res) => res.writeHead(307, { Location: `${plain.url}/cd` }).end(), true);
    // The lab's self-signed certificate: trusted through the injected fetch's own agent.
    const agent = new Agent({ connect: { rejectUnauthorized: false } });
    open.push(() => agent.close());
    const insecureFetch = ((u: string, init: RequestInit) => undiciFetch(u, { ...init, dispatcher: agent } as never)) as unknown as typeof fetch;
    await expect(resolveConfigDrive(`${secure.url}/cd`, node, { fetch: insecureFetch })).rejects.toThrow(/redirected from https to plain http/);
    expect(plain.hits).toEqual([]);
  });

  it('a stalled server fails after the idle timeout, naming the URL', async () => {
    const stall = await serve((_q, res) => {
      res.writeHead(200);
      res.write('x');
    });
    await expect(resolveConfigDrive(`${stall.url}/cd`, node, { idleMs: 300 })).rejects.toThrow(
      new RegExp(`downloading ${stall.url}/cd failed after 1 bytes: nothing arrived for 300 ms`),
    );
  });

  it('redirect loops end', async () => {
    const loop = await serve((_q, res) => res.writeHead(302, { Location: '/again' }).end());
    await expect(resolveConfigDrive(`${loop.url}/cd`, node)).rejects.toThrow(/more than 5 redirects/);
  });
});
