// `registry_endpoints`: where the controller really reaches a registry that image references
// name (split DNS, a registry only the provisioning network resolves, the simulated lab's):
//   registry_endpoints:
//     registry.lab:5000: https://10.0.0.5:5000
// Only the controller uses it (the preflight's checks, the image mirror's fill), sending the
// registry's name as Host and TLS name there (src/http/registry-target.ts); the ramdisks pull by
// the name as always.
import type { EndpointFor } from '../../http/registry-target.js';
import { EndpointMapError, parseEndpointMap } from '../../module-api/endpoint-map.js';

export { EndpointMapError as RegistryEndpointsError };

/** Docker Hub is named docker.io in references and answers as registry-1.docker.io. */
const aliasOf = (h: string) => (h === 'registry-1.docker.io' || h === 'index.docker.io' ? 'docker.io' : h);

export function parseRegistryEndpoints(value: unknown): EndpointFor {
  return parseEndpointMap(value, 'registry_endpoints', aliasOf);
}
