// The run's file server, created on first use from the host vars `tsbm_http_address`
// (host or host:port) and `tsbm_http_port`, and stopped when the run ends.
import { optionsError } from '../errors.js';
import type { RunServices } from '../module-api/types.js';
import type { Vars } from '../types.js';
import { type FileServer, startFileServer } from './file-server.js';
import { isUnspecifiedAddress, parseBindAddress } from './bind-address.js';

export function fileServerOptions(vars: Vars): { host: string; port: number } {
  const addr = vars.tsbm_http_address;
  let host = '127.0.0.1';
  let port = 0;
  // A number (`tsbm_http_address: 0` in YAML) is an address too, not "unset".
  if (addr !== undefined && addr !== null && addr !== '') {
    const parsed = typeof addr === 'string' || typeof addr === 'number' ? parseBindAddress(String(addr)) : undefined;
    if (!parsed) throw optionsError(`tsbm_http_address ${JSON.stringify(addr)} is not host or host:port`);
    host = parsed.host;
    if (parsed.port !== undefined) port = parsed.port;
  }
  if (isUnspecifiedAddress(host)) {
    throw optionsError(`tsbm_http_address ${host} is a wildcard (it binds every address); BMCs need a concrete address to fetch from`, 'set tsbm_http_address to the controller address the BMCs can reach');
  }
  if (vars.tsbm_http_port !== undefined) {
    port = Number(vars.tsbm_http_port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw optionsError(`tsbm_http_port ${String(vars.tsbm_http_port)} is not a port number`);
  }
  return { host, port };
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.') || host === '[::1]';
}

export function runFileServer(services: RunServices, vars: Vars): Promise<FileServer> {
  const { host, port } = fileServerOptions(vars);
  return services.get(`http:file-server:${host}:${port}`, () => {
    const p = startFileServer({ host, port });
    services.onClose(() => p.then((s) => s.close(), () => undefined));
    return p;
  });
}
