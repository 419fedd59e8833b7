// The curl stand-in (packages/lab/src/curl) against a local HTTP server, and against the real curl where
// installed: the same exit code, output and file for each way the product's image deploys call
// curl (src/modules/image/image-fetch.ts, image-stream.ts): GET to stdout, HEAD with redirects, a
// resumed download to a file with retries, HTTP errors, a cut transfer, a refused connection,
// a time limit. The URL always comes as a `-K -` config line on stdin, as the product sends it.
// And the anaconda kickstart callbacks' POSTs (-X, -H, --data-binary), the URL in argv as there.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCurl } from '../../packages/lab/src/curl/curl-run.js';
import { findProgram } from '../../src/util/find-program.js';

const CURL = findProgram('curl', ['/usr/bin', '/bin']);
const ROOT = resolve(import.meta.dirname, '..', '..');
const WRAPPER = join(ROOT, 'packages/lab/ramdisk/standin/curl');
const BODY = randomBytes(3 * 1024 * 1024 + 17);

let dir: string;
let server: Server;
let base: string;
let closedPort: number;
const sockets = new Set<Socket>();
const flaky = new Map<string, number>();

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const p = url.pathname;
  if (p === '/img') {
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    if (start >= BODY.length && m) {
      res.writeHead(416, { 'Content-Range': `bytes */${BODY.length}` }).end();
      return;
    }
    res.writeHead(m ? 206 : 200, {
      'Content-Length': String(BODY.length - start),
      'Accept-Ranges': 'bytes',
      ...(m ? { 'Content-Range': `bytes ${start}-${BODY.length - 1}/${BODY.length}` } : {}),
    });
    res.end(req.method === 'HEAD' ? undefined : BODY.subarray(start));
  } else if (p === '/norange') {
    res.writeHead(200, { 'Content-Length': String(BODY.length) });
    res.end(req.method === 'HEAD' ? undefined : BODY);
  } else if (p === '/redirect') {
    res.writeHead(302, { Location: '/img', 'Content-Length': '0' }).end();
  } else if (p === '/missing') {
    res.writeHead(404, { 'Content-Length': '9' }).end('not found');
  } else if (p === '/cut') {
    res.writeHead(200, { 'Content-Length': String(BODY.length) });
    res.write(BODY.subarray(0, 1000), () => res.socket?.destroy());
  } else if (p === '/flaky') {
    // 503 for the first `fails` requests of this key, then the body.
    const key = url.searchParams.get('key') ?? '';
    const left = flaky.get(key) ?? Number(url.searchParams.get('fails'));
    flaky.set(key, left - 1);
    if (left > 0) res.writeHead(503, { 'Content-Length': '0' }).end();
    else res.writeHead(200, { 'Content-Length': '2' }).end('ok');
  } else if (p === '/echo') {
    // What a kickstart callback sent: method, token header, content type and the body.
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = `${req.method} ${String(req.headers['x-tsbm-token'] ?? '-')} ${String(req.headers['content-type'] ?? '-')} ${Buffer.concat(chunks).toString('base64')}\n`;
      res.writeHead(url.searchParams.has('refuse') ? 403 : 200, { 'Content-Length': String(text.length) }).end(text);
    });
  } else if (p === '/stall') {
    res.writeHead(200, { 'Content-Length': '100' });
    res.write('x'); // and nothing more
  } else res.writeHead(500).end();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tsbm-curl-'));
  server = createServer(handle);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // A port nobody listens on: bound, noted, closed.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server?.close(r));
  rmSync(dir, { recursive: true, force: true });
});

interface Result {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

async function ours(args: string[], url: string): Promise<Result> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  let stderr = '';
  const code = await runCurl(args, { readStdin: () => `url = "${url}"\n`, stdout: out, stderr: (t) => (stderr += t) });
  return { code, stdout: Buffer.concat(chunks), stderr };
}

/** Not spawnSync: the server answering runs on this event loop. */
function run(program: string, args: string[], input: string, env: NodeJS.ProcessEnv = process.env): Promise<Result> {
  return new Promise((resolveP) => {
    const p = spawn(program, args, { env });
    const out: Buffer[] = [];
    let stderr = '';
    p.stdout.on('data', (c: Buffer) => out.push(c));
    p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    p.on('close', (code) => resolveP({ code, stdout: Buffer.concat(out), stderr }));
    p.stdin.end(input);
  });
}

const real = (args: string[], url: string) => run(CURL!, args, `url = "${url}"\n`);

/** Header lines that differ between runs (the date) left out. */
const headers = (b: Buffer) =>
  b
    .toString()
    .split('\r\n')
    .filter((l) => !/^(date|connection|keep-alive):/i.test(l));

const CASES: { name: string; args: string[]; path: string; check: (r: Result) => void }[] = [
  {
    name: 'GET to stdout (the raw image stream)',
    args: ['-fsSL', '--connect-timeout', '30', '-K', '-'],
    path: '/img',
    check: (r) => {
      expect(r.code).toBe(0);
      expect(r.stdout.equals(BODY)).toBe(true);
    },
  },
  {
    name: 'HEAD after a redirect: both responses\' headers, the last Content-Length the size',
    args: ['-fsSIL', '--connect-timeout', '30', '--max-time', '60', '-K', '-'],
    path: '/redirect',
    check: (r) => {
      expect(r.code).toBe(0);
      const h = headers(r.stdout);
      expect(h[0]).toBe('HTTP/1.1 302 Found');
      expect(h).toContain(`Content-Length: ${BODY.length}`);
    },
  },
  {
    name: 'an HTTP error with -f: exit 22, nothing on stdout',
    args: ['-fsSL', '-K', '-'],
    path: '/missing',
    check: (r) => {
      expect([r.code, r.stdout.length]).toEqual([22, 0]);
      expect(r.stderr).toBe('curl: (22) The requested URL returned error: 404\n');
    },
  },
  {
    name: 'a transfer cut short: exit 18',
    args: ['-fsSL', '-K', '-'],
    path: '/cut',
    check: (r) => {
      expect(r.code).toBe(18);
      expect(r.stderr).toMatch(/^curl: \(18\) /);
    },
  },
  {
    name: 'a time limit: exit 28',
    args: ['-fsSL', '--max-time', '1', '-K', '-'],
    path: '/stall',
    check: (r) => {
      expect(r.code).toBe(28);
      expect(r.stderr).toMatch(/^curl: \(28\) Operation timed out after \d+ milliseconds with 1 out of 100 bytes received\n$/);
    },
  },
];

describe('the curl stand-in', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const r = await ours(c.args, `${base}${c.path}`);
      c.check(r);
      if (CURL) {
        const rr = await real(c.args, `${base}${c.path}`);
        c.check(rr); // the same expectations hold for the real curl
        if (c.args.some((a) => a.includes('I'))) expect(headers(r.stdout)).toEqual(headers(rr.stdout));
      }
    }, 30_000);
  }

  it('a refused connection: exit 7', async () => {
    const r = await ours(['-fsSL', '-K', '-'], `http://127.0.0.1:${closedPort}/img`);
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(new RegExp(`^curl: \\(7\\) Failed to connect to 127\\.0\\.0\\.1 port ${closedPort} after \\d+ ms: Couldn't connect to server\\n$`));
    if (CURL) expect((await real(['-fsSL', '-K', '-'], `http://127.0.0.1:${closedPort}/img`)).code).toBe(7);
  });

  it('the qcow2 download: resumes a partial file with a Range request, retries 503s; no resume without ranges', async () => {
    for (const [who, fetch] of [['ours', ours] as const, ...(CURL ? [['real', real] as const] : [])]) {
      const file = join(dir, `${who}.qcow2`);
      writeFileSync(file, BODY.subarray(0, 1234567));
      const args = ['-fsSL', '--connect-timeout', '30', '--retry', '3', '--retry-all-errors', '--retry-delay', '1', '-C', '-', '-o', file, '-K', '-'];
      const r = await fetch(args, `${base}/img`);
      expect([who, r.code, r.stderr]).toEqual([who, 0, '']);
      expect(readFileSync(file).equals(BODY)).toBe(true);
      // Already whole: the server answers 416, which curl 7.88 with -f fails as any 4xx; the file stays.
      expect((await fetch(args, `${base}/img`)).code).toBe(22);
      expect(readFileSync(file).equals(BODY)).toBe(true);
      // Two 503s, then the body.
      const flakyFile = join(dir, `${who}.flaky`);
      const f = await fetch([...args.slice(0, -3), flakyFile, '-K', '-'], `${base}/flaky?fails=2&key=${who}`);
      expect([who, f.code]).toEqual([who, 0]);
      expect(readFileSync(flakyFile, 'utf8')).toBe('ok');
      // A server without ranges cannot resume: exit 33.
      const nr = join(dir, `${who}.norange`);
      writeFileSync(nr, 'partial');
      expect((await fetch(['-fsS', '-C', '-', '-o', nr, '-K', '-'], `${base}/norange`)).code).toBe(33);
    }
  }, 60_000);

  it("the kickstart callbacks' POSTs: -X, -H, --data-binary @FILE, @- and @/dev/null, as the real curl sends them", async () => {
    const log = join(dir, 'anaconda.log');
    writeFileSync(log, Buffer.from('12:00 ERROR anaconda: storage failed\n\u00e9\u0001'));
    const stdinBody = Buffer.from('from stdin\n');
    const cases: { args: (u: string) => string[]; stdin?: Buffer }[] = [
      { args: (u) => ['-fsS', '--max-time', '120', '-X', 'POST', '-H', 'X-Tsbm-Token: tok-1_x', '--data-binary', '@/dev/null', `${u}/echo`] },
      { args: (u) => ['-fsS', '-X', 'POST', '-H', 'X-Tsbm-Token: tok-2', '--data-binary', `@${log}`, `${u}/echo`] },
      { args: (u) => ['-fsS', '-X', 'POST', '-H', 'X-Tsbm-Token: tok-3', '--data-binary', '@-', `${u}/echo`], stdin: stdinBody },
      { args: (u) => ['-fsS', '-X', 'POST', '-H', 'X-Tsbm-Token: bad', '--data-binary', '@/dev/null', `${u}/echo?refuse=1`] },
    ];
    const oursRaw = async (args: string[], stdin?: Buffer): Promise<Result> => {
      const out = new PassThrough();
      const chunks: Buffer[] = [];
      out.on('data', (c: Buffer) => chunks.push(c));
      let stderr = '';
      const code = await runCurl(args, { readStdin: () => (stdin ?? Buffer.alloc(0)).toString(), readStdinBytes: () => stdin ?? Buffer.alloc(0), stdout: out, stderr: (t) => (stderr += t) });
      return { code, stdout: Buffer.concat(chunks), stderr };
    };
    const expected = [
      `POST tok-1_x application/x-www-form-urlencoded \n`,
      `POST tok-2 application/x-www-form-urlencoded ${readFileSync(log).toString('base64')}\n`,
      `POST tok-3 application/x-www-form-urlencoded ${stdinBody.toString('base64')}\n`,
    ];
    for (const [i, c] of cases.entries()) {
      const r = await oursRaw(c.args(base), c.stdin);
      if (i < 3) expect([r.code, r.stdout.toString(), r.stderr]).toEqual([0, expected[i], '']);
      else expect([r.code, r.stdout.length, r.stderr]).toEqual([22, 0, 'curl: (22) The requested URL returned error: 403\n']);
      if (CURL) {
        const rr = await new Promise<Result>((ok) => {
          const p = spawn(CURL, c.args(base));
          const out: Buffer[] = [];
          let stderr = '';
          p.stdout.on('data', (x: Buffer) => out.push(x));
          p.stderr.on('data', (x: Buffer) => (stderr += x.toString()));
          p.on('close', (code) => ok({ code, stdout: Buffer.concat(out), stderr }));
          p.stdin.end(c.stdin ?? '');
        });
        expect([rr.code, rr.stdout.toString(), rr.stderr]).toEqual([r.code, r.stdout.toString(), r.stderr]);
      }
    }
    // A file that is not there: exit 26, as curl.
    expect((await oursRaw(['-fsS', '--data-binary', `@${join(dir, 'nope')}`, `${base}/echo`])).code).toBe(26);
  });

  it('an option it does not implement: exit 2, named, with how to get the real curl', async () => {
    const r = await ours(['-fsSL', '--compressed', '-K', '-'], `${base}/img`);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "curl: option --compressed: is not implemented by the simulated lab's curl stand-in\ncurl: this is tsbm's simulated-lab stand-in; install curl (Debian and Ubuntu: apt-get install curl) for the full tool\n",
    );
    const cfg = await runCurl(['-K', '-'], { readStdin: () => 'header = "X: y"\n', stdout: new PassThrough(), stderr: () => {} });
    expect(cfg).toBe(2);
  });

  it.skipIf(!existsSync(join(ROOT, 'packages/lab/dist/curl/curl-cli.js')))('the ramdisk wrapper runs it where forced (or where the machine has no curl) (needs npm run build)', async () => {
    const r = await run(WRAPPER, ['-fsSL', '-K', '-'], `url = "${base}/img"\n`, {
      PATH: '/usr/bin:/bin',
      TSBM_SIM_STANDINS: 'curl',
      TSBM_SIM_NODE_BIN: process.execPath,
    });
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout.equals(BODY)).toBe(true);
  });
});
