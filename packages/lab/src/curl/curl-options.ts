// curl's command line and `-K` config, as far as the product's image deploys use them on a
// ramdisk (src/modules/image/image-fetch.ts, image-stream.ts): -f -s -S -L -I -k, --connect-timeout,
// --max-time, --retry, --retry-all-errors, --retry-delay, -C -, -o FILE, -K - (the URL arrives
// as `url = "..."` on stdin, never in argv); and as the anaconda deploy's kickstart callbacks
// use them in the simulated installer (playbooks/templates/ks.cfg.hbs): -X METHOD,
// -H 'Name: value', -d/--data and --data-binary (text, @FILE, @- for stdin). Anything else is
// refused by name.

export interface CurlOptions {
  fail: boolean;
  silent: boolean;
  showError: boolean;
  location: boolean;
  head: boolean;
  insecure: boolean;
  connectTimeoutS?: number;
  maxTimeS?: number;
  retries: number;
  retryAllErrors: boolean;
  retryDelayS: number;
  /** `-C -`: resume from the size of the output file. */
  resume: boolean;
  output?: string;
  config?: string;
  urls: string[];
  /** -X: the request method (default GET, POST with data, HEAD with -I). */
  method?: string;
  /** -H, in order. */
  headers: [string, string][];
  /** -d / --data-binary values as given (text, @FILE or @-), read when the request is made. */
  data: string[];
}

export class CurlUsage extends Error {}

const FLAGS: Record<string, keyof CurlOptions> = {
  f: 'fail',
  s: 'silent',
  S: 'showError',
  L: 'location',
  I: 'head',
  k: 'insecure',
};
const LONG_FLAGS: Record<string, keyof CurlOptions> = {
  fail: 'fail',
  silent: 'silent',
  'show-error': 'showError',
  location: 'location',
  head: 'head',
  insecure: 'insecure',
  'retry-all-errors': 'retryAllErrors',
};
const WITH_VALUE = new Set(['connect-timeout', 'max-time', 'retry', 'retry-delay', 'continue-at', 'output', 'config', 'request', 'header', 'data', 'data-binary']);
const SHORT_VALUE: Record<string, string> = { m: 'max-time', C: 'continue-at', o: 'output', K: 'config', X: 'request', H: 'header', d: 'data' };

function seconds(name: string, v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new CurlUsage(`curl: option --${name}: expected a proper numerical parameter`);
  return n;
}

function setValue(o: CurlOptions, name: string, v: string | undefined): void {
  if (v === undefined) throw new CurlUsage(`curl: option --${name}: requires parameter`);
  switch (name) {
    case 'connect-timeout':
      o.connectTimeoutS = seconds(name, v);
      return;
    case 'max-time':
      o.maxTimeS = seconds(name, v);
      return;
    case 'retry':
      o.retries = Math.floor(seconds(name, v));
      return;
    case 'retry-delay':
      o.retryDelayS = seconds(name, v);
      return;
    case 'continue-at':
      if (v !== '-') throw new CurlUsage(`curl: option -C ${v}: only "-C -" (resume from the output file's size) is implemented by this stand-in`);
      o.resume = true;
      return;
    case 'output':
      o.output = v;
      return;
    case 'config':
      o.config = v;
      return;
    case 'request':
      o.method = v;
      return;
    case 'header': {
      const i = v.indexOf(':');
      if (i <= 0) throw new CurlUsage(`curl: option -H ${JSON.stringify(v)}: only "Name: value" headers are implemented by this stand-in`);
      o.headers.push([v.slice(0, i).trim(), v.slice(i + 1).trim()]);
      return;
    }
    case 'data':
    case 'data-binary':
      o.data.push(v);
      return;
  }
}

export function parseCurlArgs(argv: string[]): CurlOptions {
  const o: CurlOptions = {
    fail: false,
    silent: false,
    showError: false,
    location: false,
    head: false,
    insecure: false,
    retries: 0,
    retryAllErrors: false,
    retryDelayS: 0,
    resume: false,
    urls: [],
    headers: [],
    data: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--')) {
      const [name, inline] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      const flag = LONG_FLAGS[name];
      if (flag) (o[flag] as boolean) = true;
      else if (WITH_VALUE.has(name)) setValue(o, name, inline ?? argv[++i]);
      else throw new CurlUsage(`curl: option --${name}: is not implemented by the simulated lab's curl stand-in`);
    } else if (a.startsWith('-') && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const c = a[j]!;
        const flag = FLAGS[c];
        if (flag) {
          (o[flag] as boolean) = true;
          continue;
        }
        const long = SHORT_VALUE[c];
        if (!long) throw new CurlUsage(`curl: option -${c}: is not implemented by the simulated lab's curl stand-in`);
        const rest = a.slice(j + 1);
        setValue(o, long, rest !== '' ? rest : argv[++i]);
        break;
      }
    } else o.urls.push(a);
  }
  return o;
}

/** curl's unescaping inside a quoted config value. */
function unescapeConfig(v: string): string {
  const map: Record<string, string> = { t: '\t', n: '\n', r: '\r', v: '\v' };
  return v.replace(/\\(.)/g, (_m, c: string) => map[c] ?? c);
}

/** The URLs of a `-K` config: `url = "..."`, `url="..."` or `url ...` lines; nothing else. */
export function parseCurlConfig(text: string): string[] {
  const urls: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(?:--)?url\s*[=:\s]\s*(?:"((?:[^"\\]|\\.)*)"|(\S+))\s*$/.exec(line);
    if (!m) {
      const key = /^(?:--)?([A-Za-z-]+)/.exec(line)?.[1] ?? line;
      throw new CurlUsage(`curl: config option "${key}" is not implemented by the simulated lab's curl stand-in`);
    }
    urls.push(m[1] !== undefined ? unescapeConfig(m[1]) : m[2]!);
  }
  return urls;
}
