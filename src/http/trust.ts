// Which certificates the controller trusts for its own HTTPS checks (registries, ISO and image
// URLs): Node's built-in roots plus the system bundle, where sites install their internal CA.
// The Redfish transport's `redfish_verify_ca: true` trusts the same (redfish/transport.ts uses these).
import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';

let bundle: string | undefined;

/** Node's roots and the system CA bundle ($SSL_CERT_FILE or Debian's path), read once. */
export function systemCas(): string {
  if (bundle === undefined) {
    let extra = '';
    try {
      extra = readFileSync(process.env.SSL_CERT_FILE ?? '/etc/ssl/certs/ca-certificates.crt', 'utf8');
    } catch {
      // no system bundle: Node's list alone
    }
    bundle = [...rootCertificates, extra].join('\n');
  }
  return bundle;
}

/** Error codes of a TLS handshake that failed on trust (the peer answered, its certificate did not pass). */
export const TLS_TRUST_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);
