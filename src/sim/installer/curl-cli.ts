// The simulated installer's curl (src/sim/installer/bin/curl runs it where the machine has no
// curl): what kickstart callbacks use. -f -s -S -L -k, -X METHOD, -H 'Name: value', -d/--data
// and --data-binary (text, @FILE or @- for stdin), -o FILE, -m/--max-time, --connect-timeout,
// --retry/--retry-delay (accepted, not retried), one URL. Anything else is refused by name, and
// exit codes are curl's (2 usage, 7 connect, 22 HTTP error with -f, 23 write, 26 read, 28 time).
import { readFileSync, writeFileSync } from 'node:fs';

interface Opts {
  fail: boolean;
  silent: boolean;
  showError: boolean;
  location: boolean;
  method?: string;
  headers: [string, string][];
  data?: Buffer;
  output?: string;
  maxTimeS?: number;
  url?: string;
}

class Exit extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const FLAGS: Record<string, 'fail' | 'silent' | 'showError' | 'location' | 'insecure'> = {
  f: 'fail',
  s: 'silent',
  S: 'showError',
  L: 'location',
  k: 'insecure',
  '--fail': 'fail',
  '--silent': 'silent',
  '--show-error': 'showError',
  '--location': 'location',
  '--insecure': 'insecure',
};
const SHORT_VALUE: Record<string, string> = { X: '--request', H: '--header', d: '--data', o: '--output', m: '--max-time' };
const LONG_VALUE = new Set(['--request', '--header', '--data', '--data-binary', '--output', '--max-time', '--connect-timeout', '--retry', '--retry-delay']);

function readData(v: string): Buffer {
  if (!v.startsWith('@')) return Buffer.from(v);
  const src = v.slice(1);
  try {
    return src === '-' ? readFileSync(0) : readFileSync(src);
  } catch {
    throw new Exit(26, `curl: (26) Failed to open/read local data from file/application`);
  }
}

function parseArgs(argv: string[]): Opts {
  const o: Opts = { fail: false, silent: false, showError: false, location: false, headers: [] };
  const value = (name: string, v: string | undefined): void => {
    if (v === undefined) throw new Exit(2, `curl: option ${name}: requires parameter`);
    switch (name) {
      case '--request':
        o.method = v;
        break;
      case '--header': {
        const i = v.indexOf(':');
        if (i <= 0) throw new Exit(2, `curl: option --header: bad header ${JSON.stringify(v)}`);
        o.headers.push([v.slice(0, i).trim(), v.slice(i + 1).trim()]);
        break;
      }
      case '--data':
      case '--data-binary':
        o.data = Buffer.concat([...(o.data ? [o.data, Buffer.from('&')] : []), readData(v)]);
        break;
      case '--output':
        o.output = v;
        break;
      case '--max-time': {
        const n = Number(v);
        if (!Number.isFinite(n) || n < 0) throw new Exit(2, `curl: option --max-time: expected a proper numerical parameter`);
        o.maxTimeS = n;
        break;
      }
      default:
        break; // --connect-timeout, --retry, --retry-delay: accepted
    }
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq > 0 ? a.slice(0, eq) : a;
      const flag = FLAGS[name];
      if (flag) {
        if (flag !== 'insecure') o[flag] = true;
      } else if (LONG_VALUE.has(name)) value(name, eq > 0 ? a.slice(eq + 1) : argv[++i]);
      else throw new Exit(2, `curl: option ${name}: is unknown (tsbm's stand-in takes what kickstart callbacks use)`);
    } else if (a.startsWith('-') && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const c = a[j]!;
        const flag = FLAGS[c];
        if (flag) {
          if (flag !== 'insecure') o[flag] = true;
          continue;
        }
        const long = SHORT_VALUE[c];
        if (!long) throw new Exit(2, `curl: option -${c}: is unknown (tsbm's stand-in takes what kickstart callbacks use)`);
        const rest = a.slice(j + 1);
        value(long, rest !== '' ? rest : argv[++i]);
        break;
      }
    } else {
      if (o.url) throw new Exit(2, 'curl: one URL only in tsbm\'s stand-in');
      o.url = a;
    }
  }
  if (!o.url) throw new Exit(2, 'curl: no URL specified');
  return o;
}

async function main(argv: string[]): Promise<number> {
  const o = parseArgs(argv);
  const ac = new AbortController();
  const timer = o.maxTimeS ? setTimeout(() => ac.abort(), o.maxTimeS * 1000) : undefined;
  let res: Response;
  try {
    res = await fetch(o.url!, {
      method: o.method ?? (o.data ? 'POST' : 'GET'),
      headers: [...(o.data ? [['Content-Type', 'application/x-www-form-urlencoded'] as [string, string]] : []), ...o.headers],
      ...(o.data ? { body: new Uint8Array(o.data) } : {}),
      redirect: o.location ? 'follow' : 'manual',
      signal: ac.signal,
    });
  } catch (e) {
    if (ac.signal.aborted) throw new Exit(28, `curl: (28) Operation timed out after ${o.maxTimeS} seconds`);
    throw new Exit(7, `curl: (7) Failed to connect: ${(e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
  const body = Buffer.from(await res.arrayBuffer());
  if (o.fail && res.status >= 400) throw new Exit(22, `curl: (22) The requested URL returned error: ${res.status}`);
  try {
    if (o.output) writeFileSync(o.output, body);
    else process.stdout.write(body);
  } catch {
    throw new Exit(23, 'curl: (23) Failure writing output to destination');
  }
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    const args = process.argv.slice(2);
    const silent = args.some((a) => a === '--silent' || /^-[A-Za-z]*s/.test(a));
    const show = args.some((a) => a === '--show-error' || /^-[A-Za-z]*S/.test(a));
    const usage = !(e instanceof Exit) || e.code === 2;
    if (usage || !silent || show) process.stderr.write(`${(e as Error).message}\n`);
    process.exitCode = e instanceof Exit ? e.code : 1;
  },
);
