// Opens the node store a setting names. The etcd client (and gRPC under it) is loaded only
// when etcd is used: most runs use the file store, and start-up time counts.
import { readFileSync } from 'node:fs';
import { TsbmError } from '../errors.js';
import { FileNodeStore } from './file-store.js';
import type { EtcdSetting, NodeStoreSetting } from './setting.js';
import type { NodeStore } from './types.js';

/** How long opening waits for etcd before refusing (ms). */
const CONNECT_TIMEOUT_MS = 5000;
/** How long one etcd request may take before the store calls etcd unreachable (ms). */
const CALL_TIMEOUT_MS = 5000;

export async function openNodeStore(setting: NodeStoreSetting, opts: { watchMs?: number } = {}): Promise<NodeStore> {
  if (setting.kind === 'files') return new FileNodeStore(setting.dir, opts.watchMs === undefined ? {} : { watchMs: opts.watchMs });
  return openEtcd(setting);
}

function readPem(file: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new TsbmError('runtime', `cannot read the etcd ${what} ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, {
      hint: 'fix the path in --state / TSBM_ETCD_* or the file permissions',
    });
  }
}

let quieted = false;

/**
 * gRPC gives an IP endpoint to TLS as the server name, and Node then warns on stderr (DEP0123,
 * "Setting the TLS ServerName to an IP address..."): noise in the operator's output about a
 * library detail. Only that warning is dropped.
 */
function quietIpServerName(): void {
  if (quieted) return;
  quieted = true;
  const emit = process.emitWarning.bind(process);
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const code = typeof rest[0] === 'object' && rest[0] !== null ? (rest[0] as { code?: string }).code : rest[1];
    if (code === 'DEP0123') return;
    (emit as (w: string | Error, ...r: unknown[]) => void)(warning, ...rest);
  }) as typeof process.emitWarning;
}

/** Connects and asks etcd for its status, so an unreachable etcd refuses the run before anything is touched. */
async function openEtcd(setting: EtcdSetting): Promise<NodeStore> {
  const [{ Etcd3 }, { EtcdNodeStore }] = await Promise.all([import('etcd3'), import('./etcd-store.js')]);
  const tls = setting.tls;
  if (setting.endpoints.some((e) => e.startsWith('https:'))) quietIpServerName();
  const client = new Etcd3({
    hosts: setting.endpoints,
    dialTimeout: CONNECT_TIMEOUT_MS,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + CALL_TIMEOUT_MS }),
    ...(tls
      ? {
          credentials: {
            // gRPC takes null for "the system's CAs"; etcd3's type says Buffer.
            rootCertificate: (tls.ca ? readPem(tls.ca, 'CA certificate') : null) as Buffer,
            ...(tls.cert ? { certChain: readPem(tls.cert, 'client certificate') } : {}),
            ...(tls.key ? { privateKey: readPem(tls.key, 'client key') } : {}),
          },
        }
      : {}),
    ...(setting.auth ? { auth: setting.auth } : {}),
  });
  const store = new EtcdNodeStore(client, setting);
  try {
    await client.maintenance.status();
  } catch (e) {
    client.close();
    // gRPC's own framing ("14 UNAVAILABLE: ", an empty "Resolution note:") says nothing to an operator.
    const why = (e as Error).message
      .split('\n')[0]!
      .replace(/^\d+ [A-Z_]+: /, '')
      .replace(/\.?\s*Resolution note:\s*$/, '');
    if (setting.auth && /authentication failed|permission denied|user name is empty/i.test(why)) {
      throw new TsbmError('runtime', `the node store ${store.where} refused user ${setting.auth.username}: ${why}`, {
        hint: 'check TSBM_ETCD_USER / ?user= and TSBM_ETCD_PASSWORD, and the user\'s role on the key prefix; nothing was touched',
      });
    }
    throw new TsbmError('runtime', `the node store ${store.where} did not answer: ${why}`, {
      hint: 'start etcd or fix --state / TSBM_STATE (and the TLS files); nothing was touched',
    });
  }
  return store;
}
