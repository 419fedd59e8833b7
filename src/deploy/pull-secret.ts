// Turns Ironic's `image_pull_secret` into a containers auth file. Ironic accepts either a
// docker auth token (base64 of "user:password") for the image's registry, or a whole
// `{"auths": {...}}` document; both end up as the JSON podman reads with --authfile.
export class PullSecretError extends Error {}

export interface AuthFile {
  json: string;
  /** Registries the file has credentials for (never the credentials). */
  registries: string[];
}

export function buildAuthFile(secret: string, registry: string): AuthFile {
  const s = secret.trim();
  if (s.startsWith('{')) {
    let doc: unknown;
    try {
      doc = JSON.parse(s);
    } catch {
      // Never echo the secret; say only what shape was expected.
      throw new PullSecretError('image_pull_secret looks like JSON but does not parse');
    }
    const auths = (doc as { auths?: unknown }).auths;
    if (!auths || typeof auths !== 'object' || Array.isArray(auths)) {
      throw new PullSecretError(
        'image_pull_secret JSON has no "auths" mapping (expected {"auths": {"registry": {"auth": "..."}}})',
      );
    }
    return { json: JSON.stringify(doc), registries: Object.keys(auths) };
  }
  const decoded = Buffer.from(s, 'base64').toString('utf8');
  if (!/^[A-Za-z0-9+/=_-]+$/.test(s) || !decoded.includes(':')) {
    throw new PullSecretError(
      'image_pull_secret is neither an auths JSON nor a base64 "user:password" token',
    );
  }
  return { json: JSON.stringify({ auths: { [registry]: { auth: s } } }), registries: [registry] };
}
