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

/** What a registry needs to know of one auths entry (never printed). */
export interface RegistryLogin {
  username?: string;
  password?: string;
  identityToken?: string;
}

/** An auths key as containers' auth lookup compares it: no scheme, no /v1/ or /v2/, Docker Hub's aliases folded. */
function normalizeAuthKey(key: string): string {
  let k = key.trim().replace(/^https?:\/\//i, '').replace(/\/+$/, '');
  k = k.replace(/\/v[12]$/, '');
  const [host, ...rest] = k.split('/');
  const h = host === 'index.docker.io' || host === 'registry-1.docker.io' ? 'docker.io' : host;
  return [h, ...rest].join('/');
}

/**
 * The credentials an auth file (buildAuthFile's JSON) holds for `registry/repository`: the most
 * specific key that names the registry, or the registry and a leading part of the repository
 * path, as podman picks them. undefined when none applies.
 */
export function loginFor(authJson: string, registry: string, repository: string): RegistryLogin | undefined {
  const doc = JSON.parse(authJson) as {
    auths?: Record<string, { auth?: string; username?: string; password?: string; identitytoken?: string }>;
  };
  const full = `${registry}/${repository}`;
  let best: { len: number; entry: NonNullable<typeof doc.auths>[string] } | undefined;
  for (const [key, entry] of Object.entries(doc.auths ?? {})) {
    const k = normalizeAuthKey(key);
    if (k !== registry && !(full === k || full.startsWith(`${k}/`))) continue;
    if (!best || k.length > best.len) best = { len: k.length, entry };
  }
  const e = best?.entry;
  if (!e) return undefined;
  if (e.identitytoken) return { identityToken: e.identitytoken };
  if (e.auth) {
    const decoded = Buffer.from(e.auth, 'base64').toString('utf8');
    const i = decoded.indexOf(':');
    if (i > 0) return { username: decoded.slice(0, i), password: decoded.slice(i + 1) };
  }
  if (e.username && e.password !== undefined) return { username: e.username, password: e.password };
  return undefined;
}
