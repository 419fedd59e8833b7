// Reads Ironic-style `driver_info` into a validated Redfish endpoint.
import { optionsError } from '../errors.js';
import { parseAllowedOrigins } from './origin.js';

export interface RedfishEndpoint {
  /** `https://host[:port]`, no trailing slash. */
  baseUrl: string;
  /** host[:port], for messages and the client pool key. */
  bmc: string;
  username: string | undefined;
  password: string | undefined;
  systemId: string | undefined;
  /** true = system CAs, a string = path to a CA bundle, false = no verification. */
  verifyCa: boolean | string;
  /** Origins besides the BMC's own that it may send tsbm to (redfish_allowed_origins); default none. */
  allowedOrigins?: string[];
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);

export function parseVerifyCa(v: unknown): boolean | string {
  if (v === undefined || v === null || v === '') return true;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string') {
    const l = v.trim().toLowerCase();
    if (['true', 'yes', 'on', '1'].includes(l)) return true;
    if (['false', 'no', 'off', '0'].includes(l)) return false;
    return v;
  }
  throw optionsError('driver_info.redfish_verify_ca must be true, false or a path to a CA bundle');
}

export function endpointFromDriverInfo(driverInfo: unknown): RedfishEndpoint {
  const di = (driverInfo && typeof driverInfo === 'object' ? driverInfo : {}) as Record<string, unknown>;
  const address = str(di.redfish_address);
  if (!address) {
    throw optionsError('driver_info.redfish_address is not set', 'set driver_info.redfish_address: https://<bmc-host>[:port] for the node');
  }
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(address) ? address : `https://${address}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw optionsError(`driver_info.redfish_address ${JSON.stringify(address)} is not a valid address`, 'use https://host[:port]');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw optionsError(`driver_info.redfish_address uses ${url.protocol} which is not supported`, 'use https://host[:port]');
  }
  return {
    baseUrl: `${url.protocol}//${url.host}`,
    bmc: url.host,
    username: str(di.redfish_username),
    password: str(di.redfish_password),
    systemId: str(di.redfish_system_id),
    verifyCa: parseVerifyCa(di.redfish_verify_ca),
    allowedOrigins: parseAllowedOrigins(di.redfish_allowed_origins),
  };
}
