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

/** Connects and asks etcd for its status, so an unreachable etcd refuses the run before anything is touched. */
async function openEtcd(setting: EtcdSetting): Promise<NodeStore> {
  const [{ Etcd3 }, { EtcdNodeStore }] = await Promise.all([import('etcd3'), import('./etcd-store.js')]);
  const tls = setting.tls;
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
    throw new TsbmError('runtime', `the node store ${store.where} did not answer: ${(e as Error).message.split('\n')[0]}`, {
      hint: 'start etcd or fix --state / TSBM_STATE (and the TLS files); nothing was touched',
    });
  }
  return store;
}
