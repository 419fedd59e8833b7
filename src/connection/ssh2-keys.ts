// ssh2 signs and verifies with the PEM text it keeps on each parsed key, so OpenSSL parses that
// PEM again for every signature: each SSH handshake on both ends (the host key's signature) and
// each public-key login. At a thousand nodes that was ~2.5 s of CPU in the runner and the lab.
// Here the keys' shared prototype signs and verifies with a KeyObject made once per PEM.
import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';

interface ParsedKeyLike {
  sign(data: Buffer, algo?: string): Buffer | Error;
  verify(data: Buffer, signature: Buffer, algo?: string): boolean | Error;
}

/** PEM text to its KeyObject; a run holds a few thousand host keys at most. */
const keyObjects = new Map<string, KeyObject>();
const MAX_CACHED = 20_000;

function keyObject(pem: string, make: (pem: string) => KeyObject): KeyObject {
  let key = keyObjects.get(pem);
  if (!key) {
    key = make(pem);
    if (keyObjects.size < MAX_CACHED) keyObjects.set(pem, key);
  }
  return key;
}

/** Number of PEM keys turned into KeyObjects so far (tests check the reuse). */
export function cachedKeyObjects(): number {
  return keyObjects.size;
}

/**
 * Patches the prototype of `sample` (any key ssh2's parseKey returned). Keys whose PEM or hash
 * algorithm are not where ssh2 1.x keeps them are left to ssh2's own methods.
 */
export function signWithKeyObjects(sample: object): void {
  const proto = Object.getPrototypeOf(sample) as ParsedKeyLike;
  const symbol = (description: string) => Object.getOwnPropertySymbols(sample).find((s) => s.description === description);
  const privPem = symbol('Private key PEM');
  const pubPem = symbol('Public key PEM');
  const hashAlgo = symbol('Hash Algorithm');
  if (!privPem || !pubPem || !hashAlgo || typeof proto.sign !== 'function' || typeof proto.verify !== 'function') return;
  const ownSign = proto.sign;
  const ownVerify = proto.verify;
  type Keyed = ParsedKeyLike & Record<symbol, unknown>;
  proto.sign = function (this: Keyed, data: Buffer, algo?: string) {
    const pem = this[privPem];
    if (typeof pem !== 'string') return ownSign.call(this, data, algo);
    const alg = algo || (this[hashAlgo] as string | null | undefined) || null;
    try {
      return sign(alg, data, keyObject(pem, createPrivateKey));
    } catch (e) {
      return e as Error;
    }
  };
  proto.verify = function (this: Keyed, data: Buffer, signature: Buffer, algo?: string) {
    const pem = this[pubPem];
    if (typeof pem !== 'string') return ownVerify.call(this, data, signature, algo);
    const alg = algo || (this[hashAlgo] as string | null | undefined) || null;
    try {
      return verify(alg, data, keyObject(pem, createPublicKey), signature);
    } catch (e) {
      return e as Error;
    }
  };
}
