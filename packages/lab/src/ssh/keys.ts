// Key pairs for simulated hosts and test clients. ssh2's generator now and then (about 1 in
// 250 ed25519 keys) emits a private key its own parser rejects, so every key is checked.
import { utils } from 'tsbm/lib/connection/ssh2-lib.js';

export type SshKeyType = 'ed25519' | 'ecdsa' | 'rsa';

export interface SshKeyPair {
  /** OpenSSH-format private key. */
  private: string;
  /** `type base64` public key line. */
  public: string;
}

export function generateSshKeyPair(type: SshKeyType = 'ed25519'): SshKeyPair {
  for (let i = 0; i < 20; i++) {
    const kp =
      type === 'rsa'
        ? utils.generateKeyPairSync('rsa', { bits: 2048 })
        : type === 'ecdsa'
          ? utils.generateKeyPairSync('ecdsa', { bits: 256 })
          : utils.generateKeyPairSync('ed25519');
    const priv = utils.parseKey(kp.private);
    if (!(priv instanceof Error) && !(utils.parseKey(kp.public) instanceof Error)) {
      // One signature now makes the key's OpenSSL object (ssh2-keys.ts caches it by PEM), so a
      // server's first handshake does not: a lab makes its keys at start, not during a deploy.
      (Array.isArray(priv) ? priv[0] : priv)?.sign(Buffer.alloc(1));
      return { private: kp.private, public: kp.public };
    }
  }
  throw new Error(`could not generate a usable ${type} key pair`);
}
