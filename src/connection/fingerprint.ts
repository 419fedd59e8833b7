// OpenSSH-style key fingerprints (`SHA256:` + unpadded base64 of the wire-format public key).
import { createHash } from 'node:crypto';

export function sha256Fingerprint(publicKeyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(publicKeyBlob).digest('base64').replace(/=+$/, '')}`;
}

/** Compares fingerprints leniently: with or without the `SHA256:` prefix and base64 padding. */
export function sameFingerprint(a: string, b: string): boolean {
  const norm = (s: string) => s.trim().replace(/^SHA256:/i, '').replace(/=+$/, '');
  return norm(a) === norm(b);
}
