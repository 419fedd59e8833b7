// Which URLs a BMC may send tsbm to. Everything a BMC hands out (the session collection link,
// Location headers, task monitors, `@odata.id`s, action targets) is data from a machine tsbm
// does not trust: followed blindly, one compromised BMC (or a man in the middle where
// redfish_verify_ca is false) would collect the fleet's BMC password. So every request goes to
// the BMC's own origin (scheme, host and port of redfish_address) unless the operator names
// another origin in driver_info.redfish_allowed_origins; anything else is refused before a byte
// is sent.
import { optionsError } from '../errors.js';
import { RedfishError } from './errors.js';

/** driver_info.redfish_allowed_origins (a list, or a comma-separated string) as origins. */
export function parseAllowedOrigins(v: unknown): string[] {
  if (v === undefined || v === null || v === '') return [];
  const items = typeof v === 'string' ? v.split(',') : Array.isArray(v) ? v : undefined;
  if (!items) throw optionsError('driver_info.redfish_allowed_origins must be a list of https://host[:port] origins');
  return items.map((item) => {
    const u = typeof item === 'string' ? safeUrl(item.trim()) : undefined;
    // An origin, not a URL with a path: "https://other:8443/redfish" would suggest a prefix rule.
    const plain = u && (u.protocol === 'https:' || u.protocol === 'http:') && u.pathname === '/' && !u.search && !u.hash && !u.username && !u.password;
    if (!u || !plain) {
      throw optionsError(
        `driver_info.redfish_allowed_origins entry ${JSON.stringify(item)} is not an origin`,
        'give scheme, host and port only, e.g. https://10.0.0.5:443',
      );
    }
    return u.origin;
  });
}

export class OriginPolicy {
  private readonly allowed: Set<string>;

  constructor(
    /** The BMC's own origin, from redfish_address. */
    readonly baseUrl: string,
    extra: readonly string[],
    /** For errors: the BMC (host:port) and the inventory node it belongs to. */
    private readonly who: { bmc: string; node?: string | undefined },
  ) {
    this.allowed = new Set([new URL(baseUrl).origin, ...extra]);
  }

  /**
   * The absolute URL for a path or URL the BMC handed out; throws before anything is sent when
   * it points at another origin. A path (`/redfish/v1/...`) always stays on the BMC.
   */
  resolve(pathOrUrl: string, method: string): URL {
    // Anything with a scheme (any case, any scheme) or a network-path reference (`//host/...`,
    // which the WHATWG parser also reads from `\\host`) names an origin of its own.
    const absolute = /^[a-z][a-z0-9+.-]*:/i.test(pathOrUrl) || /^[/\\]{2}/.test(pathOrUrl);
    const url = absolute
      ? safeUrl(pathOrUrl)
      : safeUrl(`${this.baseUrl}${pathOrUrl.startsWith('/') ? '' : '/'}${pathOrUrl}`);
    if (url && this.allowed.has(url.origin)) return url;
    const node = this.who.node ? ` of ${this.who.node}` : '';
    throw new RedfishError(
      `refused: the BMC sent tsbm to ${url?.origin ?? JSON.stringify(pathOrUrl)}, which is not its own origin ${new URL(this.baseUrl).origin}; nothing was sent there (credentials stay with the BMC)`,
      {
        method,
        url: url?.href ?? pathOrUrl,
        bmc: `${this.who.bmc}${node}`,
        ...(this.who.node ? { host: this.who.node } : {}),
        hint: `if this BMC really delegates to ${url?.origin ?? 'that address'}, list it in driver_info.redfish_allowed_origins; otherwise treat the BMC as compromised or the path as intercepted`,
      },
    );
  }
}

function safeUrl(s: string): URL | undefined {
  try {
    return new URL(s);
  } catch {
    return undefined;
  }
}
