// Where a request to a registry really goes. Requests are named by the registry's own host (as
// the image reference, a token realm or a redirect names it); `registry_endpoints` may say the
// controller reaches that host elsewhere (split DNS, a lab: registry.lab:5000 at
// https://10.0.0.5:5000). The request then goes to that address, still carrying the registry's
// name as its Host header and TLS name (SNI, and the name the certificate must show), so a
// registry behind a name-based virtual host, or with a certificate for its name only, answers
// as it would by name. The preflight's manifest check and the image mirror's fill both use this.
import { isIP } from 'node:net';

/** host[:port] as a reference names it → http(s)://host[:port] where the controller reaches it. */
export type EndpointFor = (hostPort: string) => string | undefined;

export interface RegistryTarget {
  /** The URL the connection goes to. */
  url: string;
  /** `host` when the URL is not the registry's own name; nothing otherwise. */
  headers: Record<string, string>;
  /** The name TLS must present and verify, when it differs from the URL's host. */
  servername?: string;
}

/** The target for `namedUrl` (an absolute URL naming the registry's own host). */
export function registryTarget(namedUrl: string, endpointFor: EndpointFor | undefined): RegistryTarget {
  const u = new URL(namedUrl);
  const to = endpointFor?.(u.host);
  if (!to) return { url: u.href, headers: {} };
  const e = new URL(to);
  const real = new URL(`${u.pathname}${u.search}`, `${e.protocol}//${e.host}`);
  // TLS names no IP address (RFC 6066): a registry named by one is checked at the endpoint's.
  const name = u.hostname.replace(/^\[|\]$/g, '');
  return { url: real.href, headers: { host: u.host }, ...(isIP(name) ? {} : { servername: name }) };
}
