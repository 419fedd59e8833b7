// Logging in to a registry as podman does, for every controller-side registry client (the
// preflight's manifest check, the image mirror's fill): a 401's `WWW-Authenticate` challenge,
// and for `Bearer` a token from the challenge's realm (the distribution token protocol). With
// a user and password the realm is asked by GET with Basic auth; with an identity token (an
// OAuth2 refresh token: `identitytoken` in a containers auth file, as `podman login` stores it
// for Azure ACR or some Harbor setups) by POST of the form `grant_type=refresh_token` (the
// protocol's OAuth2 flavour), whose `access_token` is the bearer token. The caller's transport
// carries the requests (it knows where the registry really is and how to reach it), so the
// token never leaves this exchange except as the Authorization header it becomes.

export interface RegistryCredentials {
  username?: string | undefined;
  password?: string | undefined;
  /** An OAuth2 refresh token (`identitytoken` in a containers auth file). */
  identityToken?: string | undefined;
}

export interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** `Bearer realm="https://auth",service="reg",scope="repository:x:pull"` (RFC 7235, quoted or token values). */
export function parseChallenge(header: string | undefined): Challenge | undefined {
  if (!header) return undefined;
  const m = /^\s*([A-Za-z][\w-]*)\s*(.*)$/s.exec(header);
  if (!m) return undefined;
  const params: Record<string, string> = {};
  const re = /([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?\s*/gy;
  const rest = m[2] ?? '';
  re.lastIndex = 0;
  for (let p = re.exec(rest); p; p = re.exec(rest)) {
    params[(p[1] as string).toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : (p[3] ?? '');
    if (re.lastIndex >= rest.length) break;
  }
  return { scheme: (m[1] as string).toLowerCase(), params };
}

export const hasUserPassword = (c: RegistryCredentials | undefined): c is RegistryCredentials & { username: string; password: string } =>
  !!c?.username && c.password !== undefined;

export const basicAuthorization = (c: RegistryCredentials) => `Basic ${Buffer.from(`${c.username ?? ''}:${c.password ?? ''}`).toString('base64')}`;

/** The first `errors[].code: message` of a distribution API error body, if it has one. */
export function distributionError(body: Buffer): { code?: string; text: string } | undefined {
  try {
    const doc = JSON.parse(body.toString('utf8')) as { errors?: Array<{ code?: string; message?: string }> };
    const e = doc.errors?.[0];
    if (e) return { ...(e.code ? { code: e.code } : {}), text: [e.code, e.message].filter(Boolean).join(': ') };
  } catch {
    // not JSON: the status tells the story
  }
  return undefined;
}

/** One request to the token service, by its URL as the challenge names it. */
export type TokenTransport = (
  url: string,
  req: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
) => Promise<{ status: number; body: Buffer }>;

/** The token service said no, or gave no token; `status` is its HTTP status (0: never asked). */
export class TokenRefused extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'TokenRefused';
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'of the registry';
  }
}

/**
 * A bearer token for pulling `repository`, from a `Bearer` challenge's realm: by POST with the
 * identity token when there is one, else by GET (with Basic auth when there are a user and a
 * password, anonymous otherwise). TokenRefused when the service refuses or gives none.
 */
export async function fetchRegistryToken(send: TokenTransport, ch: Challenge, repository: string, credentials: RegistryCredentials | undefined): Promise<string> {
  const realm = ch.params.realm;
  if (!realm) throw new TokenRefused('the registry asked for a Bearer token but named no realm', 0);
  const scope = ch.params.scope ?? `repository:${repository}:pull`;
  let res: { status: number; body: Buffer };
  if (credentials?.identityToken) {
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: credentials.identityToken,
      service: ch.params.service ?? '',
      scope,
      client_id: 'tsbm',
    });
    res = await send(realm, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
  } else {
    const u = new URL(realm);
    if (ch.params.service) u.searchParams.set('service', ch.params.service);
    u.searchParams.set('scope', scope);
    res = await send(u.href, { method: 'GET', headers: hasUserPassword(credentials) ? { authorization: basicAuthorization(credentials) } : {} });
  }
  if (res.status !== 200) {
    const said = distributionError(res.body)?.text.replace(/\s+/g, ' ');
    throw new TokenRefused(`token service ${hostOf(realm)} answered ${res.status}${said ? ` (${said.slice(0, 200)})` : ''}`, res.status);
  }
  try {
    const doc = JSON.parse(res.body.toString('utf8')) as { token?: unknown; access_token?: unknown };
    const token = doc.token ?? doc.access_token;
    if (typeof token === 'string' && token) return token;
  } catch {
    // falls through
  }
  throw new TokenRefused(`token service ${hostOf(realm)} gave no token`, res.status);
}
