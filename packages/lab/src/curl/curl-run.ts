// The curl stand-in the simulated ramdisk runs where the machine has no curl (a minimal Debian
// has none): one HTTP(S) transfer as the product's image deploys ask for it (GET to stdout or
// to a file, resumed with a Range request; HEAD printing the headers; redirects, retries,
// timeouts), with curl's exit codes and error lines (`curl: (22) ...`), which the product maps
// to reasons and retry decisions (src/modules/image/image-stream.ts).
import { createWriteStream, readFileSync, statSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { type CurlOptions, CurlUsage, parseCurlArgs, parseCurlConfig } from './curl-options.js';

export interface CurlIo {
  readStdin: () => string;
  /** stdin as bytes, for --data-binary @- (default: readStdin's text). */
  readStdinBytes?: () => Buffer;
  stdout: NodeJS.WritableStream;
  stderr: (text: string) => void;
}

class CurlFail extends Error {
  constructor(
    readonly rc: number,
    message: string,
  ) {
    super(message);
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const CERT_ERRORS = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ALTNAME/;

function connectionError(e: NodeJS.ErrnoException, url: URL, ms: number): CurlFail {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  switch (e.code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new CurlFail(6, `Could not resolve host: ${url.hostname}`);
    case 'ECONNREFUSED':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new CurlFail(7, `Failed to connect to ${url.hostname} port ${port} after ${ms} ms: Couldn't connect to server`);
    case 'ECONNRESET':
      return e.message === 'socket hang up' ? new CurlFail(52, 'Empty reply from server') : new CurlFail(56, 'Recv failure: Connection reset by peer');
  }
  if (e.code && CERT_ERRORS.test(e.code)) return new CurlFail(60, `SSL certificate problem: ${e.message}`);
  if (e.code?.startsWith('ERR_SSL') || e.code?.startsWith('ERR_TLS')) return new CurlFail(35, `TLS connect error: ${e.message}`);
  return new CurlFail(56, `Recv failure: ${e.message}`);
}

function headerText(res: IncomingMessage): string {
  const lines = [`HTTP/${res.httpVersion} ${res.statusCode} ${res.statusMessage ?? ''}`.trimEnd()];
  for (let i = 0; i < res.rawHeaders.length; i += 2) lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

const fileSize = (f: string): number => {
  try {
    return statSync(f).size;
  } catch {
    return 0;
  }
};

/** The request body from -d / --data-binary values (curl joins several with &). */
function requestBody(o: CurlOptions, io: CurlIo): Buffer | undefined {
  if (o.data.length === 0) return undefined;
  const parts = o.data.map((v) => {
    if (!v.startsWith('@')) return Buffer.from(v);
    const src = v.slice(1);
    try {
      return src === '-' ? (io.readStdinBytes?.() ?? Buffer.from(io.readStdin())) : readFileSync(src);
    } catch {
      throw new CurlFail(26, `Failed to open/read local data from file/application`);
    }
  });
  return Buffer.concat(parts.flatMap((b, i) => (i ? [Buffer.from('&'), b] : [b])));
}

/** One attempt: the request (and its redirects) until the body is written or it fails. */
function transfer(o: CurlOptions, first: URL, io: CurlIo, deadline: number | undefined, body?: Buffer): Promise<void> {
  const started = Date.now();
  return new Promise<void>((resolve, reject) => {
    let done = false;
    const finish = (e?: CurlFail) => {
      if (done) return;
      done = true;
      clearTimeout(total);
      if (e) reject(e);
      else resolve();
    };
    let received = 0;
    let expected: number | undefined;
    const total = deadline === undefined ? undefined : setTimeout(() => {
      current?.destroy();
      const of = expected === undefined ? '' : ` out of ${expected}`;
      finish(new CurlFail(28, `Operation timed out after ${Date.now() - started} milliseconds with ${received}${of} bytes received`));
    }, Math.max(0, deadline - Date.now()));
    let current: ReturnType<typeof httpRequest> | undefined;

    const go = (url: URL, hops: number, method: string, payload: Buffer | undefined) => {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        finish(new CurlFail(1, `Protocol "${url.protocol.replace(/:$/, '')}" not supported`));
        return;
      }
      const offset = o.resume && o.output ? fileSize(o.output) : 0;
      const headers: Record<string, string> = {
        'User-Agent': 'curl/7.88.1',
        Accept: '*/*',
        ...(offset > 0 ? { Range: `bytes=${offset}-` } : {}),
        ...(payload ? { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': String(payload.length) } : {}),
      };
      for (const [k, v] of o.headers) {
        for (const h of Object.keys(headers)) if (h.toLowerCase() === k.toLowerCase()) delete headers[h];
        headers[k] = v;
      }
      const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method, headers, rejectUnauthorized: !o.insecure });
      current = req;
      const connectMs = (o.connectTimeoutS ?? 300) * 1000;
      const connectTimer = setTimeout(() => {
        req.destroy();
        finish(new CurlFail(28, `Connection timed out after ${connectMs} milliseconds`));
      }, connectMs);
      req.on('socket', (s) => {
        if (!s.connecting) clearTimeout(connectTimer);
        s.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
      });
      req.on('error', (e: NodeJS.ErrnoException) => {
        clearTimeout(connectTimer);
        finish(connectionError(e, url, Date.now() - started));
      });
      req.on('response', (res) => {
        clearTimeout(connectTimer);
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (o.head && !(o.fail && status >= 400)) io.stdout.write(headerText(res));
        if (o.location && REDIRECTS.has(status) && location) {
          res.resume();
          if (hops >= 50) finish(new CurlFail(47, 'Maximum (50) redirects followed'));
          // As curl: 301-303 turn a POST into a GET without its body (unless -X set the method).
          else if (status <= 303 && method === 'POST' && o.method === undefined) go(new URL(location, url), hops + 1, 'GET', undefined);
          else go(new URL(location, url), hops + 1, method, payload);
          return;
        }
        if (offset > 0 && status === 416 && !o.fail) {
          // Resuming a file that is already whole. (With -f, curl 7.88 fails it as any 4xx.)
          const whole = /^bytes \*\/(\d+)$/.exec(String(res.headers['content-range'] ?? ''));
          res.resume();
          if (whole && Number(whole[1]) === offset) finish();
          else finish(new CurlFail(33, "HTTP server doesn't seem to support byte ranges. Cannot resume."));
          return;
        }
        if (o.fail && status >= 400) {
          res.resume();
          finish(new CurlFail(22, `The requested URL returned error: ${status}`));
          return;
        }
        if (o.head) {
          res.resume();
          res.on('end', () => finish());
          return;
        }
        if (offset > 0 && status !== 206) {
          res.resume();
          finish(new CurlFail(33, "HTTP server doesn't seem to support byte ranges. Cannot resume."));
          return;
        }
        expected = res.headers['content-length'] === undefined ? undefined : Number(res.headers['content-length']);
        const file = o.output ? createWriteStream(o.output, { flags: offset > 0 ? 'a' : 'w' }) : undefined;
        const out: NodeJS.WritableStream = file ?? io.stdout;
        const writeFailed = () => {
          req.destroy();
          finish(new CurlFail(23, 'Failure writing output to destination'));
        };
        out.on('error', writeFailed);
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (!out.write(chunk)) {
            res.pause();
            out.once('drain', () => res.resume());
          }
        });
        res.on('error', (e: NodeJS.ErrnoException) => finish(connectionError(e, url, Date.now() - started)));
        const short = () => (expected !== undefined && received < expected ? new CurlFail(18, `transfer closed with ${expected - received} bytes remaining to read`) : undefined);
        res.on('aborted', () => {
          const e = short();
          if (e) finish(e);
        });
        res.on('end', () => {
          const e = short();
          if (e) {
            finish(e);
            return;
          }
          if (file) file.end(() => finish());
          else finish();
        });
      });
      req.end(payload);
    };
    go(first, 0, o.method ?? (body ? 'POST' : o.head ? 'HEAD' : 'GET'), body);
  });
}

export async function runCurl(argv: string[], io: CurlIo): Promise<number> {
  let o: CurlOptions;
  let urls: string[];
  try {
    o = parseCurlArgs(argv);
    urls = [...o.urls];
    if (o.config !== undefined) urls.push(...parseCurlConfig(o.config === '-' ? io.readStdin() : readFileSync(o.config, 'utf8')));
  } catch (e) {
    if (!(e instanceof CurlUsage)) throw e;
    io.stderr(`${e.message}\ncurl: this is tsbm's simulated-lab stand-in; install curl (Debian and Ubuntu: apt-get install curl) for the full tool\n`);
    return 2;
  }
  if (urls.length !== 1) {
    io.stderr(urls.length === 0 ? 'curl: no URL specified!\n' : "curl: several URLs are not implemented by tsbm's simulated-lab stand-in\n");
    return 2;
  }
  let url: URL;
  try {
    url = new URL(urls[0]!);
  } catch {
    io.stderr(`curl: (3) URL using bad/illegal format or missing URL\n`);
    return 3;
  }
  const deadline = o.maxTimeS === undefined ? undefined : Date.now() + o.maxTimeS * 1000;
  let body: Buffer | undefined;
  try {
    body = requestBody(o, io);
  } catch (e) {
    if (!(e instanceof CurlFail)) throw e;
    if (!o.silent || o.showError) io.stderr(`curl: (${e.rc}) ${e.message}\n`);
    return e.rc;
  }
  for (let attempt = 0; ; attempt++) {
    try {
      await transfer(o, url, io, deadline, body);
      return 0;
    } catch (e) {
      if (!(e instanceof CurlFail)) throw e;
      const transient = e.rc === 28 || /returned error: (408|429|500|502|503|504)$/.test(e.message);
      if (attempt < o.retries && (o.retryAllErrors || transient)) {
        // curl waits the --retry-delay, else one second doubling.
        const delayS = o.retryDelayS || 2 ** attempt;
        if (!o.silent) io.stderr(`Warning: Problem : ${e.message}. Will retry in ${delayS} seconds. ${o.retries - attempt} retries left.\n`);
        await new Promise((r) => setTimeout(r, delayS * 1000));
        continue;
      }
      if (!o.silent || o.showError) io.stderr(`curl: (${e.rc}) ${e.message}\n`);
      return e.rc;
    }
  }
}
