// Behaviour profiles: a mockup tree may carry `_profile.json` naming the Redfish service whose
// behaviour its BMC copies beyond the tree's shape. `sushy-tools` is the Redfish emulator
// Ironic's CI puts in front of libvirt VMs (its libvirt driver): the boot override is always
// Continuous (the driver ignores BootSourceOverrideEnabled), a Boot PATCH without a target or a
// mode is refused with 400 and a plain-text body labelled as JSON, a target the VM has no device
// for (None) fails with 500, and a PATCH that works answers 204 with no body.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Json } from './state.js';

/** What the profile answers instead of the standard PATCH: status, content type, raw body. */
interface RawAnswer {
  status: number;
  contentType: string;
  body: string;
}

export interface BmcProfile {
  name: string;
  /** Handles a PATCH of `resource` (undefined: the standard semantics apply). */
  patch?(resource: Json, body: unknown): RawAnswer | undefined;
}

const PROFILE_FILE = '_profile.json';

/** The profile a mockup directory names, if any. */
export function loadProfile(mockupDir: string): BmcProfile | undefined {
  const file = join(mockupDir, PROFILE_FILE);
  if (!existsSync(file)) return undefined;
  const name = (JSON.parse(readFileSync(file, 'utf8')) as { profile?: unknown }).profile;
  if (name === 'sushy-tools') return SUSHY_TOOLS;
  throw new Error(`${file}: unknown profile ${JSON.stringify(name)} (known: sushy-tools)`);
}

// sushy-tools labels every answer of its system routes application/json, its own refusals too.
const plain = (status: number, text: string): RawAnswer => ({ status, contentType: 'application/json', body: text });
const generalError = (status: number, message: string): RawAnswer => ({
  status,
  contentType: 'application/json',
  // Its error document: the text in error.message, an ExtendedInfo entry with an id and no Message.
  body: JSON.stringify({ error: { code: 'Base.1.0.GeneralError', message, '@Message.ExtendedInfo': [{ MessageId: 'Base.1.0.GeneralError' }] } }),
});

/** The libvirt driver's boot devices: Pxe (network), Hdd (disk), Cd (cdrom); UefiHttp becomes Pxe. */
const SUSHY_DEVICES = new Set(['Pxe', 'Hdd', 'Cd']);

const SUSHY_TOOLS: BmcProfile = {
  name: 'sushy-tools',
  patch(resource, body) {
    if (!String(resource['@odata.type'] ?? '').includes('#ComputerSystem.')) return undefined;
    const p = (body && typeof body === 'object' ? body : {}) as Json;
    const boot = p.Boot && typeof p.Boot === 'object' ? (p.Boot as Json) : undefined;
    if (!boot && p.IndicatorLED === undefined) return plain(400, 'A PATCH of a System may only change Boot or IndicatorLED');
    if (!boot) return { status: 204, contentType: 'application/json', body: '' };
    let target = typeof boot.BootSourceOverrideTarget === 'string' ? boot.BootSourceOverrideTarget : undefined;
    const mode = typeof boot.BootSourceOverrideMode === 'string' ? boot.BootSourceOverrideMode : undefined;
    if (!target && !mode && !boot.HttpBootUri) {
      return plain(400, 'The Boot element needs BootSourceOverrideTarget, BootSourceOverrideMode or HttpBootUri');
    }
    const current = (resource.Boot as Json | undefined) ?? {};
    if (target === 'UefiHttp') target = 'Pxe';
    if (target && !SUSHY_DEVICES.has(target)) {
      return generalError(500, `The domain ${String(resource.Id)} has no libvirt device for boot target ${target}`);
    }
    if (mode && mode !== 'UEFI' && mode !== 'Legacy') return generalError(400, `Unknown boot mode ${mode}`);
    // The driver makes the target the VM's one boot device: an override that never expires.
    resource.Boot = {
      ...current,
      ...(target ? { BootSourceOverrideTarget: target } : {}),
      BootSourceOverrideEnabled: 'Continuous',
      ...(mode ? { BootSourceOverrideMode: mode } : {}),
    };
    return { status: 204, contentType: 'application/json', body: '' };
  },
};
