// A throwaway self-signed certificate for the fake BMC, made with the openssl CLI (node:crypto
// cannot issue X.509 certificates). The certificate is its own CA, so tests can pass its PEM
// as `redfish_verify_ca` exactly as an operator passes a real BMC's CA bundle.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isIP } from 'node:net';

const run = promisify(execFile);

export interface SelfSignedCert {
  certPem: string;
  keyPem: string;
}

const cache = new Map<string, Promise<SelfSignedCert>>();

/** A certificate valid for `host`, 127.0.0.1 and localhost; generated once per host per process. */
export function selfSignedCert(host = '127.0.0.1'): Promise<SelfSignedCert> {
  let p = cache.get(host);
  if (!p) {
    p = generate(host);
    cache.set(host, p);
    p.catch(() => cache.delete(host));
  }
  return p;
}

async function generate(host: string): Promise<SelfSignedCert> {
  const dir = await mkdtemp(join(tmpdir(), 'tsbm-bmc-tls-'));
  try {
    const names = new Set(['IP:127.0.0.1', 'DNS:localhost', isIP(host) ? `IP:${host}` : `DNS:${host}`]);
    const cert = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    await run('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-days', '7', '-subj', '/CN=tsbm fake BMC', '-keyout', key, '-out', cert,
      '-addext', `subjectAltName=${[...names].join(',')}`,
      '-addext', 'basicConstraints=critical,CA:TRUE',
    ]);
    return { certPem: await readFile(cert, 'utf8'), keyPem: await readFile(key, 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
