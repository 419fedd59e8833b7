// Ansible Vault's AES256 scheme, with Node's crypto: PBKDF2-HMAC-SHA256 (10000 iterations)
// stretches the password and the salt into 80 bytes: an AES-256 key, an HMAC-SHA256 key and
// the CTR counter's start. The HMAC over the ciphertext proves the password before anything is
// decrypted; the plaintext carries PKCS#7 padding. Plaintext stays in memory, in Buffers the
// caller owns.
import { createDecipheriv, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import type { VaultEnvelope } from './format.js';

const ITERATIONS = 10_000;

/** The plaintext, or undefined when the password is not this vault's (the HMAC does not match). */
export function decryptEnvelope(env: VaultEnvelope, password: Buffer): Buffer | undefined {
  const derived = pbkdf2Sync(password, env.salt, ITERATIONS, 80, 'sha256');
  const key = derived.subarray(0, 32);
  const hmacKey = derived.subarray(32, 64);
  const iv = derived.subarray(64, 80);
  const mac = createHmac('sha256', hmacKey).update(env.ciphertext).digest();
  if (mac.length !== env.hmac.length || !timingSafeEqual(mac, env.hmac)) return undefined;
  const decipher = createDecipheriv('aes-256-ctr', key, iv);
  const padded = Buffer.concat([decipher.update(env.ciphertext), decipher.final()]);
  const pad = padded.at(-1) ?? 0;
  if (pad < 1 || pad > 16 || pad > padded.length || !padded.subarray(padded.length - pad).every((b) => b === pad)) {
    return undefined;
  }
  return padded.subarray(0, padded.length - pad);
}
