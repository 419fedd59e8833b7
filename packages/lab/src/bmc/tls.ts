// A throwaway certificate for the fake BMC, issued in-process (x509.ts): a CA and a server
// certificate it signs. Its CA is kept so tests pass it as `redfish_verify_ca` exactly as an
// operator passes a real BMC's CA bundle. No openssl program is needed.
import { generateKeyPairSync } from 'node:crypto';
import { isIP } from 'node:net';
import { certificatePem, issueCertificate } from './x509.js';

export interface SelfSignedCert {
  certPem: string;
  keyPem: string;
  /** The CA that signed certPem: what a client passes as its trust bundle. */
  caPem: string;
}

const cache = new Map<string, SelfSignedCert>();

/** A certificate valid for `host`, 127.0.0.1 and localhost; generated once per host per process. */
export async function selfSignedCert(host = '127.0.0.1'): Promise<SelfSignedCert> {
  let c = cache.get(host);
  if (!c) {
    c = generate(host);
    cache.set(host, c);
  }
  return c;
}

const ecKey = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

function generate(host: string): SelfSignedCert {
  return certificateFor([...new Set(['127.0.0.1', 'localhost', host])]);
}

/**
 * A fresh CA and a server certificate it signs for exactly `names` (a test server known by a
 * name only, as a registry behind registry_endpoints is); never cached: each call, its own CA.
 */
export function certificateFor(names: string[]): SelfSignedCert {
  // A CA and a leaf it signs: strict verifiers (Python 3.13) refuse a bare self-signed leaf.
  const ca = ecKey();
  const caName = 'tsbm fake BMC CA';
  const caDer = issueCertificate({ commonName: caName, publicKey: ca.publicKey, signingKey: ca.privateKey, ca: true, validDays: 7 });
  const leaf = ecKey();
  const leafDer = issueCertificate({
    commonName: 'tsbm fake BMC',
    publicKey: leaf.publicKey,
    signingKey: ca.privateKey,
    issuer: { commonName: caName, publicKey: ca.publicKey },
    ca: false,
    altNames: names.filter((n) => isIP(n) || /^[A-Za-z0-9.-]+$/.test(n)),
    validDays: 7,
  });
  return {
    certPem: certificatePem(leafDer),
    keyPem: leaf.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    caPem: certificatePem(caDer),
  };
}
