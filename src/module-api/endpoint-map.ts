// Maps of host[:port] (as a URL or an image reference names it) to where the controller really
// reaches it: `registry_endpoints` for registries, `image_url_endpoints` for image servers. Nodes
// on a provisioning network often use an address the controller cannot reach (a lab's
// guest-side 10.0.2.2, split DNS); only the controller's own requests follow the map, sending
// the original name as Host and TLS name there (src/http/registry-target.ts).
import type { EndpointFor } from '../http/registry-target.js';

export class EndpointMapError extends Error {}

const HOST_PORT = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/** `value` (the variable `varName`) as a lookup; `fold` gives aliases one key. */
export function parseEndpointMap(value: unknown, varName: string, fold: (hostPort: string) => string = (h) => h): EndpointFor {
  if (value === undefined || value === null || value === '') return () => undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new EndpointMapError(`${varName} must be a mapping of host[:port] to URL`);
  }
  const map = new Map<string, string>();
  for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
    if (!HOST_PORT.test(name)) {
      throw new EndpointMapError(`${varName} key ${JSON.stringify(name)} is not a host[:port]`);
    }
    let u: URL | undefined;
    try {
      u = typeof raw === 'string' ? new URL(raw) : undefined;
    } catch {
      u = undefined;
    }
    if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || (u.pathname !== '/' && u.pathname !== '') || u.search || u.username) {
      throw new EndpointMapError(`${varName} ${JSON.stringify(name)}: ${JSON.stringify(raw)} is not an http(s)://host[:port] URL`);
    }
    map.set(fold(name.toLowerCase()), `${u.protocol}//${u.host}`);
  }
  return (hostPort) => map.get(fold(hostPort.toLowerCase()));
}
