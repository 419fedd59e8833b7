// The address a server of tsbm listens on (the file server, the image mirror), as a variable
// gives it: `host`, `host:port` or `[v6]:port`. "Never a wildcard" is decided on the address as
// the system will read it, not on its spelling: `0`, `0x0`, `0.0`, `000.0.0.0`, `::0`, `[::0]`,
// `0:0:0:0:0:0:0:0` and `::ffff:0.0.0.0` all bind every address, as `0.0.0.0` and `::` do.

export interface BindAddress {
  host: string;
  /** Undefined when the value names no port. */
  port?: number;
}

/** `host`, `host:port`, `[v6]` or `[v6]:port`; a bare IPv6 address (`fd00::1`) is a host. */
export function parseBindAddress(raw: string): BindAddress | undefined {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(raw);
  const m = bracketed ?? /^([^:]+)(?::(\d+))?$/.exec(raw);
  if (m?.[1]) return m[2] ? { host: m[1], port: Number(m[2]) } : { host: m[1] };
  // More than one colon and no brackets: an IPv6 address without a port.
  if (/^[0-9A-Fa-f:.]+$/.test(raw) && raw.split(':').length > 2 && canonicalHost(raw) !== undefined) return { host: raw };
  return undefined;
}

/**
 * The host as an address parser reads it (WHATWG URL: IPv4 in any of inet_aton's spellings,
 * IPv6 compressed), e.g. `0x0` -> `0.0.0.0`, `::0` -> `[::]`; undefined when it is no host.
 */
function canonicalHost(host: string): string | undefined {
  const h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  try {
    return new URL(`http://${h.includes(':') ? `[${h}]` : h}/`).hostname;
  } catch {
    return undefined;
  }
}

const UNSPECIFIED = new Set(['0.0.0.0', '[::]', '[::ffff:0:0]']);

/** Whether binding `host` would listen on every address of the machine (IPv4 or IPv6). */
export function isUnspecifiedAddress(host: string): boolean {
  const c = canonicalHost(host.trim());
  return c !== undefined && UNSPECIFIED.has(c);
}
