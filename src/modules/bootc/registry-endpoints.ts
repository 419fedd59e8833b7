// `registry_endpoints`: where the controller really reaches a registry that image references
// name (split DNS, a registry only the provisioning network resolves, the simulated lab's):
//   registry_endpoints:
//     registry.lab:5000: https://10.0.0.5:5000
// Only the controller uses it (the preflight's checks, the image mirror's fill), sending the
// registry's name as Host and TLS name there (src/http/registry-target.ts); the ramdisks pull by
// the name as always.
import type { EndpointFor } from '../../http/registry-target.js';

export class RegistryEndpointsError extends Error {}

const HOST_PORT = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

/** Docker Hub is named docker.io in references and answers as registry-1.docker.io. */
const aliasOf = (h: string) => (h === 'registry-1.docker.io' || h === 'index.docker.io' ? 'docker.io' : h);

export function parseRegistryEndpoints(value: unknown): EndpointFor {
  if (value === undefined || value === null || value === '') return () => undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new RegistryEndpointsError('registry_endpoints must be a mapping of registry (host[:port]) to URL');
  }
  const map = new Map<string, string>();
  for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
    if (!HOST_PORT.test(name)) {
      throw new RegistryEndpointsError(`registry_endpoints key ${JSON.stringify(name)} is not a registry host[:port]`);
    }
    let u: URL | undefined;
    try {
      u = typeof raw === 'string' ? new URL(raw) : undefined;
    } catch {
      u = undefined;
    }
    if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || (u.pathname !== '/' && u.pathname !== '') || u.search || u.username) {
      throw new RegistryEndpointsError(
        `registry_endpoints ${JSON.stringify(name)}: ${JSON.stringify(raw)} is not an http(s)://host[:port] URL`,
      );
    }
    map.set(aliasOf(name.toLowerCase()), `${u.protocol}//${u.host}`);
  }
  return (hostPort) => map.get(aliasOf(hostPort.toLowerCase()));
}
