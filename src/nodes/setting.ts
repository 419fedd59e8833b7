// Where node state lives, as an operator writes it: `--state`, $TSBM_STATE or the project
// config file. `files` (the default) or `files:DIR` keeps locks and records in a directory;
// `etcd://HOST:PORT[,HOST:PORT...][/PREFIX][?ttl=SECONDS]` in etcd (`etcds://` for TLS).
// TLS files and etcd's user come from the query (`cacert=`, `cert=`, `key=`, `user=`) or from
// TSBM_ETCD_CACERT / TSBM_ETCD_CERT / TSBM_ETCD_KEY / TSBM_ETCD_USER; the password only from
// TSBM_ETCD_PASSWORD (a setting is printed in messages and journals, a password must not be).
import { optionsError } from '../errors.js';
import { type LockDirEnv, lockDirFor } from '../journal/lock-dir.js';

interface FilesSetting {
  kind: 'files';
  dir: string;
}

export interface EtcdSetting {
  kind: 'etcd';
  /** `http://host:port` or `https://host:port`, as etcd's own clients take them. */
  endpoints: string[];
  /** Every key tsbm writes starts with it (ends with `/`). */
  prefix: string;
  /** How long a controller's locks outlive it (seconds): the etcd lease's TTL. */
  ttlSeconds: number;
  /** PEM file paths: the CA that signed etcd's certificate, and this client's certificate and key. */
  tls?: { ca?: string; cert?: string; key?: string };
  auth?: { username: string; password: string };
}

export type NodeStoreSetting = FilesSetting | EtcdSetting;

/** The documented default: a dead controller's nodes are free this long after it stopped. */
export const DEFAULT_ETCD_TTL = 30;
const DEFAULT_PREFIX = 'tsbm/';

export interface SettingSources {
  /** `--state` */
  flag?: string | undefined;
  /** The project config file's value and where it was read (`tsbm.cfg:12`). */
  config?: { value: string; from: string } | undefined;
  /** `--lock-dir` (the files store's directory when `--state` does not name one). */
  lockDir?: string | undefined;
  where?: LockDirEnv;
}

const here = (): LockDirEnv => ({ env: process.env, uid: process.getuid?.(), home: (process.env.HOME ?? '/') });

/** The store setting in force: --state, else $TSBM_STATE, else the config file, else files. */
export function resolveStoreSetting(src: SettingSources = {}): NodeStoreSetting {
  const where = src.where ?? here();
  const fromFlag = src.flag?.trim();
  const fromEnv = where.env.TSBM_STATE?.trim();
  const [text, origin] = fromFlag
    ? [fromFlag, '--state']
    : fromEnv
      ? [fromEnv, 'TSBM_STATE']
      : src.config?.value.trim()
        ? [src.config.value.trim(), src.config.from]
        : ['files', 'the default'];
  return parseStoreSetting(text, origin, src.lockDir, where);
}

export function parseStoreSetting(text: string, origin: string, lockDir: string | undefined, where: LockDirEnv = here()): NodeStoreSetting {
  if (text === 'files') return { kind: 'files', dir: lockDirFor(lockDir, where) };
  if (text.startsWith('files:')) {
    const dir = text.slice('files:'.length).trim();
    if (!dir) throw optionsError(`${origin}: files: needs a directory`, 'e.g. --state files:/srv/tsbm/state, or just --state files');
    return { kind: 'files', dir };
  }
  const m = /^(etcds?):\/\/([^/?#]+)(\/[^?#]*)?(?:\?([^#]*))?$/.exec(text);
  if (!m) {
    throw optionsError(`${origin}: "${text}" is not a node store`, 'use files, files:DIR, or etcd://HOST:PORT[,HOST:PORT] (etcds:// for TLS)');
  }
  const query = new URLSearchParams(m[4] ?? '');
  for (const k of query.keys()) {
    if (!['ttl', 'cacert', 'cert', 'key', 'user'].includes(k)) {
      throw optionsError(`${origin}: unknown etcd option "${k}"`, 'etcd options: ttl, cacert, cert, key, user (the password only from TSBM_ETCD_PASSWORD)');
    }
  }
  if (query.has('password')) throw optionsError(`${origin}: no password in the store setting`, 'set TSBM_ETCD_PASSWORD');
  const env = where.env;
  const ca = query.get('cacert') ?? env.TSBM_ETCD_CACERT?.trim();
  const cert = query.get('cert') ?? env.TSBM_ETCD_CERT?.trim();
  const key = query.get('key') ?? env.TSBM_ETCD_KEY?.trim();
  if (Boolean(cert) !== Boolean(key)) throw optionsError(`${origin}: a client certificate needs both cert and key`, 'give both, as etcdctl --cert and --key');
  const tls = m[1] === 'etcds' || Boolean(ca || cert);
  const endpoints = m[2]!.split(',').map((h) => endpoint(h.trim(), tls, origin));
  const ttlText = query.get('ttl');
  const ttlSeconds = ttlText === null ? DEFAULT_ETCD_TTL : Number(ttlText);
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 2 || ttlSeconds > 3600) {
    throw optionsError(`${origin}: ttl must be a whole number of seconds from 2 to 3600, got "${ttlText}"`, `the default is ${DEFAULT_ETCD_TTL}`);
  }
  const path = (m[3] ?? '').replace(/^\/+|\/+$/g, '');
  const setting: EtcdSetting = { kind: 'etcd', endpoints, prefix: path ? `${path}/` : DEFAULT_PREFIX, ttlSeconds };
  if (tls && (ca || cert)) setting.tls = { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) };
  const username = query.get('user') ?? env.TSBM_ETCD_USER?.trim();
  if (username) {
    const password = env.TSBM_ETCD_PASSWORD;
    if (!password) throw optionsError(`${origin}: etcd user ${username} needs TSBM_ETCD_PASSWORD`, 'export TSBM_ETCD_PASSWORD');
    setting.auth = { username, password };
  }
  return setting;
}

function endpoint(hostPort: string, tls: boolean, origin: string): string {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(hostPort);
  const port = Number(m?.[2] ?? 2379);
  if (!m || port < 1 || port > 65535) throw optionsError(`${origin}: "${hostPort}" is not an etcd HOST:PORT`, 'e.g. etcd://10.0.0.2:2379,10.0.0.3:2379');
  return `${tls ? 'https' : 'http'}://${m[1]}:${port}`;
}
