// A throwaway certificate for the fake BMC, made with the openssl CLI (node:crypto cannot issue
// X.509 certificates). Its CA is kept so tests pass it as `redfish_verify_ca` exactly as an
// operator passes a real BMC's CA bundle.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isIP } from 'node:net';

const run = promisify(execFile);

export interface SelfSignedCert {
  certPem: string;
  keyPem: string;
  /** The CA that signed certPem: what a client passes as its trust bundle. */
  caPem: string;
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
    const f = (n: string) => join(dir, n);
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    // A throwaway CA and a leaf it signs: strict verifiers (Python 3.13) refuse a bare self-signed leaf.
    await run('openssl', ['req', '-x509', ...ec, '-days', '7', '-subj', '/CN=tsbm fake BMC CA', '-keyout', f('ca.key'), '-out', f('ca.pem'),
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    await run('openssl', ['req', ...ec, '-subj', '/CN=tsbm fake BMC', '-keyout', f('key.pem'), '-out', f('leaf.csr')]);
    writeFileSync(f('ext.cnf'), [
      `subjectAltName=${[...names].join(',')}`,
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'authorityKeyIdentifier=keyid',
      'subjectKeyIdentifier=hash',
    ].join('\n'));
    await run('openssl', ['x509', '-req', '-in', f('leaf.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial',
      '-days', '7', '-extfile', f('ext.cnf'), '-out', f('cert.pem')]);
    return { certPem: await readFile(f('cert.pem'), 'utf8'), keyPem: await readFile(f('key.pem'), 'utf8'), caPem: await readFile(f('ca.pem'), 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
