// PATCH semantics of the fake BMC: only writable properties, values from the allowed lists,
// virtual media kept consistent (an Image implies Inserted), ETag preconditions.
import { BmcHttpError } from './messages.js';
import { etagOf, type Json } from './state.js';

const SYSTEM_WRITABLE = new Set([
  'Boot', 'AssetTag', 'IndicatorLED', 'LocationIndicatorActive', 'HostName',
  'PowerOnDelaySeconds', 'PowerOffDelaySeconds', 'PowerCycleDelaySeconds', 'PowerRestorePolicy',
]);
const BOOT_WRITABLE = new Set([
  'BootSourceOverrideTarget', 'BootSourceOverrideEnabled', 'BootSourceOverrideMode', 'UefiTargetBootSourceOverride',
  'BootNext', 'BootOrder', 'AutomaticRetryConfig', 'AutomaticRetryAttempts', 'HttpBootUri', 'StopBootOnFault',
  'TrustedModuleRequiredToBoot',
]);
const MEDIA_WRITABLE = new Set([
  'Image', 'Inserted', 'WriteProtected', 'TransferProtocolType', 'TransferMethod', 'UserName', 'Password', 'VerifyCertificate',
]);
const ALWAYS_READ_ONLY = new Set(['Id', 'Status', 'Members', 'Actions', 'Links', 'PowerState', 'UUID', 'MediaTypes']);
const STANDARD_ENUMS: Record<string, string[]> = {
  BootSourceOverrideEnabled: ['Disabled', 'Once', 'Continuous'],
  BootSourceOverrideMode: ['Legacy', 'UEFI'],
};

function readOnly(prop: string): BmcHttpError {
  return new BmcHttpError(400, 'PropertyNotWritable', `The property ${prop} is a read only property and cannot be assigned a value.`, 'Remove the property from the request body and resubmit the request if the operation failed.');
}

function checkValue(container: Json, key: string, value: unknown): void {
  const allowed = container[`${key}@Redfish.AllowableValues`] ?? STANDARD_ENUMS[key];
  if (Array.isArray(allowed) && !allowed.includes(value)) {
    throw new BmcHttpError(400, 'PropertyValueNotInList', `The value ${JSON.stringify(value)} for the property ${key} is not in the list of acceptable values.`, 'Choose a value from the enumeration list that the implementation can support and resubmit the request if the operation failed.');
  }
}

function sameEtag(a: string, b: string): boolean {
  const strip = (s: string) => s.trim().replace(/^W\//, '');
  return strip(a) === strip(b);
}

/** Throws 412 when the precondition fails (or is missing while required). */
export function checkIfMatch(body: Json, ifMatch: string | undefined, required: boolean): void {
  if (!ifMatch) {
    if (required) throw new BmcHttpError(412, 'PreconditionRequired', 'A precondition header or annotation is required to change this resource.', 'Add an If-Match header with the resource ETag and resubmit the request.');
    return;
  }
  const current = etagOf(body);
  const ok = ifMatch.split(',').some((t) => t.trim() === '*' || sameEtag(t, current));
  if (!ok) throw new BmcHttpError(412, 'PreconditionFailed', 'The ETag supplied did not match the ETag required to change this resource.', 'Try the operation again using the appropriate ETag.');
}

export interface PatchOptions {
  ignoreBootOverride?: boolean;
  onceReadsContinuous?: boolean;
  /** The empty form of Image this tree uses ("" on iLO, null elsewhere). */
  emptyImage: '' | null;
}

export function applyPatch(resource: Json, patch: unknown, opts: PatchOptions): void {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch)) {
    throw new BmcHttpError(400, 'MalformedJSON', 'The request body submitted was malformed JSON and could not be parsed by the receiving service.', 'Ensure that the request body is valid JSON and resubmit the request.');
  }
  const p = patch as Json;
  const type = String(resource['@odata.type'] ?? '');
  const isSystem = type.includes('#ComputerSystem.');
  const isMedia = type.includes('#VirtualMedia.') && !type.includes('Collection');
  for (const key of Object.keys(p)) {
    if (key.startsWith('@odata') || ALWAYS_READ_ONLY.has(key)) throw readOnly(key);
    if (isSystem && !SYSTEM_WRITABLE.has(key)) throw readOnly(key);
    if (isMedia && !MEDIA_WRITABLE.has(key)) throw readOnly(key);
  }
  if (isSystem && p.Boot !== undefined) {
    const boot = (resource.Boot as Json | undefined) ?? {};
    const bp = p.Boot as Json;
    for (const [k, v] of Object.entries(bp)) {
      if (!BOOT_WRITABLE.has(k)) throw readOnly(`Boot/${k}`);
      checkValue(boot, k, v);
    }
    if (!opts.ignoreBootOverride) resource.Boot = { ...boot, ...bp };
    const b = resource.Boot as Json;
    if (opts.onceReadsContinuous && b.BootSourceOverrideEnabled === 'Once') b.BootSourceOverrideEnabled = 'Continuous';
  }
  for (const [k, v] of Object.entries(p)) {
    if (k === 'Boot' && isSystem) continue;
    checkValue(resource, k, v);
    if (k !== 'Password') resource[k] = v;
  }
  if (isMedia) {
    if ('Image' in p) {
      const empty = p.Image === null || p.Image === '';
      if (empty) resource.Image = opts.emptyImage;
      if (!('Inserted' in p)) resource.Inserted = !empty;
    }
    if (resource.Inserted === false) {
      resource.Image = opts.emptyImage;
      resource.ConnectedVia = 'NotConnected';
    } else if (typeof resource.Image === 'string' && resource.Image !== '') {
      resource.ConnectedVia = 'URI';
      resource.ImageName = resource.Image.split('/').pop() ?? null;
    }
  }
}
