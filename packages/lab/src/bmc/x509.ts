// Issues X.509 v3 certificates with node:crypto's ECDSA (P-256, SHA-256) and the DER encoder
// beside it: the fake BMC's throwaway CA and the server certificate it signs. No openssl
// program: the simulated lab runs on a machine with nothing but Node.js.
import { createHash, type KeyObject, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';
import {
  bitStringBytes,
  boolean,
  explicit,
  implicitPrimitive,
  namedBits,
  octetString,
  oid,
  pem,
  sequence,
  set,
  smallInteger,
  time,
  unsignedInteger,
  utf8String,
} from './der.js';

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));
const COMMON_NAME = '2.5.4.3';
const EXT = {
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
};
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const KEY_USAGE = { digitalSignature: 0, keyCertSign: 5, cRLSign: 6 };

export interface IssueOptions {
  commonName: string;
  /** The certified key. */
  publicKey: KeyObject;
  /** The signer's key: the subject's own for a self-signed CA. */
  signingKey: KeyObject;
  issuer?: { commonName: string; publicKey: KeyObject };
  ca: boolean;
  /** Subject alternative names: IP addresses and DNS names (servers only). */
  altNames?: string[];
  validDays: number;
}

const name = (cn: string): Buffer => sequence(set(sequence(oid(COMMON_NAME), utf8String(cn))));

function spki(key: KeyObject): Buffer {
  return key.export({ type: 'spki', format: 'der' });
}

/** RFC 5280's method 1: SHA-1 of the subjectPublicKey bits. */
function keyId(key: KeyObject): Buffer {
  const der = spki(key);
  // SubjectPublicKeyInfo = SEQUENCE { AlgorithmIdentifier, BIT STRING }: the BIT STRING is last.
  // For P-256 it is the 65-byte uncompressed point after the unused-bits byte.
  const point = der.subarray(der.length - 65);
  return createHash('sha1').update(point).digest();
}

const extension = (id: string, critical: boolean, value: Buffer): Buffer =>
  sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));

function generalName(n: string): Buffer {
  const family = isIP(n);
  if (family === 4) return implicitPrimitive(7, Buffer.from(n.split('.').map(Number)));
  if (family === 6) return implicitPrimitive(7, ipv6Bytes(n));
  return implicitPrimitive(2, Buffer.from(n, 'latin1'));
}

function ipv6Bytes(addr: string): Buffer {
  const [head = '', tail] = addr.split('::');
  const groups = (s: string) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? h : [...h, ...new Array(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  for (const [i, g] of all.entries()) out.writeUInt16BE(Number.parseInt(g, 16), i * 2);
  return out;
}

/** A DER certificate. */
export function issueCertificate(o: IssueOptions): Buffer {
  const now = Date.now();
  const serial = randomBytes(16);
  serial[0]! &= 0x7f; // positive, at most 20 bytes (RFC 5280 4.1.2.2)
  const exts = [
    o.ca ? extension(EXT.basicConstraints, true, sequence(boolean(true))) : extension(EXT.basicConstraints, true, sequence()),
    extension(
      EXT.keyUsage,
      true,
      namedBits(o.ca ? [KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign] : [KEY_USAGE.digitalSignature]),
    ),
    ...(o.ca ? [] : [extension(EXT.extKeyUsage, false, sequence(oid(SERVER_AUTH)))]),
    ...(o.altNames?.length ? [extension(EXT.subjectAltName, false, sequence(...o.altNames.map(generalName)))] : []),
    extension(EXT.subjectKeyIdentifier, false, octetString(keyId(o.publicKey))),
    ...(o.issuer ? [extension(EXT.authorityKeyIdentifier, false, sequence(implicitPrimitive(0, keyId(o.issuer.publicKey))))] : []),
  ];
  const tbs = sequence(
    explicit(0, smallInteger(2)), // v3
    unsignedInteger(serial),
    ECDSA_WITH_SHA256,
    name(o.issuer?.commonName ?? o.commonName),
    // An hour back: clocks of the client and the lab may differ a little.
    sequence(time(new Date(now - 3600_000)), time(new Date(now + o.validDays * 86400_000))),
    name(o.commonName),
    spki(o.publicKey),
    explicit(3, sequence(...exts)),
  );
  const signature = sign('sha256', tbs, { key: o.signingKey, dsaEncoding: 'der' });
  return sequence(tbs, ECDSA_WITH_SHA256, bitStringBytes(signature));
}

export const certificatePem = (der: Buffer): string => pem('CERTIFICATE', der);
