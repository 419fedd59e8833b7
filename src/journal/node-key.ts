// What a node lock is keyed by: the machine, not its inventory name, so two inventories (or two
// names in one) that reach one machine take the same lock. A node with a BMC is its BMC's
// address; a host without one is its SSH address; a controller-local host is its name.
//
// The BMC address is compared at scheme-default-port granularity: `10.0.0.5`,
// `https://10.0.0.5` and `https://10.0.0.5:443/` are one BMC. The System id is left out on
// purpose: one inventory may name it and another leave it to discovery, and both must collide;
// so the Systems of one multi-node BMC (a blade enclosure) are serialised across runs.
// Addresses are compared as written: a DNS name and an IP address of one BMC are two keys.

/** One host to lock: its inventory name and the machine it is (the lock's name). */
export interface LockTarget {
  host: string;
  key: string;
}

/** `bmc:HOST:PORT` for a Redfish address (bare host = https), undefined when it does not parse. */
export function bmcLockKey(address: string): string | undefined {
  const a = address.trim();
  if (!a) return undefined;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(a) ? a : `https://${a}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (!url.hostname) return undefined;
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return `bmc:${stripDot(url.hostname)}:${port}`;
}

/** `ssh:ADDRESS:PORT` (an IPv6 address in brackets). */
export function sshLockKey(address: string, port: number): string {
  let host = address.trim().toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return `ssh:${host.includes(':') ? `[${host}]` : stripDot(host)}:${port}`;
}

/** A host run on the controller itself has no other identity than its name. */
export const localLockKey = (host: string): string => `local:${host}`;

const stripDot = (h: string) => (h.endsWith('.') ? h.slice(0, -1) : h);

/** `BMC 10.0.0.5:443`, `SSH 10.0.0.9:22`, or '' for a key that is just a name. */
export function describeKey(key: string): string {
  if (key.startsWith('bmc:')) return `BMC ${key.slice(4)}`;
  if (key.startsWith('ssh:')) return `SSH ${key.slice(4)}`;
  return '';
}
