// Proves the ramdisk that answered is the machine the BMC controls, before anything
// destructive. Ironic trusts the agent's lookup; a lab with reused IPs can hand the deploy to
// the wrong box, so tsbm compares the SMBIOS UUID and/or MACs with what the BMC reported.
import type { IdentityMode } from '../../module-api/arg-names.js';

export interface IdentityFacts {
  /** From the BMC (redfish_power's `system_uuid`). */
  bmcUuid?: string;
  /** From the BMC (redfish_power's `mac_addresses`). */
  bmcMacs: string[];
  /** The ramdisk's /sys/class/dmi/id/product_uuid, when the file exists. */
  hostUuid?: string;
  /** The ramdisk's interfaces' MACs (`ip -j link`). */
  hostMacs: string[];
}

export interface IdentityVerdict {
  ok: boolean;
  /** How the decision was made, for the result ("uuid matched", "no product_uuid: matched by MAC"...). */
  method: string;
  message: string;
}

function normUuid(u: string): string {
  return u.trim().toLowerCase().replace(/[{}]/g, '');
}

function normMac(m: string): string {
  return m.trim().toLowerCase().replace(/-/g, ':');
}

/** SMBIOS before 2.6 stored the first three UUID fields little-endian; BMCs and kernels disagree. */
function swapUuidEndianness(u: string): string {
  const parts = normUuid(u).split('-');
  if (parts.length !== 5) return normUuid(u);
  const rev = (h: string) => (h.match(/../g) ?? []).reverse().join('');
  return [rev(parts[0] ?? ''), rev(parts[1] ?? ''), rev(parts[2] ?? ''), parts[3], parts[4]].join('-');
}

function sameUuid(a: string, b: string): boolean {
  return normUuid(a) === normUuid(b) || swapUuidEndianness(a) === normUuid(b);
}

/** MACs of real interfaces from `ip -j link` (loopback and all-zero addresses dropped). */
export function macsFromIpLink(json: string): string[] {
  const doc = JSON.parse(json) as Array<{ address?: string; link_type?: string }>;
  return doc
    .filter((l) => l.link_type !== 'loopback' && typeof l.address === 'string')
    .map((l) => normMac(l.address as string))
    .filter((a) => /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/.test(a) && a !== '00:00:00:00:00:00');
}

export function checkIdentity(mode: IdentityMode, f: IdentityFacts): IdentityVerdict {
  if (mode === 'off') return { ok: true, method: 'off', message: 'identity check disabled' };
  const bmcMacs = f.bmcMacs.map(normMac);
  const hostMacs = f.hostMacs.map(normMac);
  const uuidKnown = f.bmcUuid !== undefined && f.hostUuid !== undefined;
  const macKnown = bmcMacs.length > 0 && hostMacs.length > 0;
  const uuidOk = uuidKnown && sameUuid(f.bmcUuid as string, f.hostUuid as string);
  const common = hostMacs.filter((m) => bmcMacs.includes(m));
  const macOk = common.length > 0;
  const uuidMsg = `BMC system UUID ${f.bmcUuid ?? '(unknown)'}, ramdisk product_uuid ${f.hostUuid ?? '(not available)'}`;
  const macMsg = `BMC MACs [${bmcMacs.join(', ')}], ramdisk MACs [${hostMacs.join(', ')}]`;
  const uuidMissing = f.bmcUuid !== undefined && f.hostUuid === undefined;

  const need = (what: 'uuid' | 'mac'): IdentityVerdict | undefined => {
    if (what === 'uuid' && !uuidKnown)
      return { ok: false, method: 'uuid', message: `cannot check identity by UUID: ${uuidMsg}` };
    if (what === 'mac' && !macKnown)
      return { ok: false, method: 'mac', message: `cannot check identity by MAC: ${macMsg}` };
    return undefined;
  };

  switch (mode) {
    case 'uuid': {
      const miss = need('uuid');
      if (miss) return miss;
      return uuidOk
        ? { ok: true, method: 'uuid', message: `system UUID matches (${normUuid(f.hostUuid as string)})` }
        : { ok: false, method: 'uuid', message: `wrong machine: ${uuidMsg}` };
    }
    case 'mac': {
      const miss = need('mac');
      if (miss) return miss;
      return macOk
        ? { ok: true, method: 'mac', message: `MAC ${common[0]} matches the BMC's` }
        : { ok: false, method: 'mac', message: `wrong machine: no common MAC; ${macMsg}` };
    }
    case 'both': {
      const miss = need('uuid') ?? need('mac');
      if (miss) return miss;
      if (!uuidOk) return { ok: false, method: 'both', message: `wrong machine: ${uuidMsg}` };
      if (!macOk) return { ok: false, method: 'both', message: `wrong machine: no common MAC; ${macMsg}` };
      return { ok: true, method: 'both', message: `system UUID and MAC ${common[0]} match` };
    }
    case 'any': {
      // Either identity suffices (e.g. a NIC swapped but the board is the same).
      if (!uuidKnown && !macKnown)
        return { ok: false, method: 'any', message: `no identity data to compare: ${uuidMsg}; ${macMsg}` };
      if (uuidOk)
        return {
          ok: true,
          method: 'uuid',
          message: `system UUID matches (${normUuid(f.hostUuid as string)})`,
        };
      if (macOk) return { ok: true, method: 'mac', message: `MAC ${common[0]} matches the BMC's` };
      return { ok: false, method: 'any', message: `wrong machine: ${uuidMsg}; ${macMsg}` };
    }
    case 'auto': {
      // Check whatever data exists; every available check must pass, at least one must exist.
      if (!uuidKnown && !macKnown) {
        return {
          ok: true,
          method: 'none',
          message: `no identity data to compare (${uuidMsg}; ${macMsg}); not checked`,
        };
      }
      if (uuidKnown && !uuidOk) return { ok: false, method: 'uuid', message: `wrong machine: ${uuidMsg}` };
      if (macKnown && !macOk)
        return { ok: false, method: 'mac', message: `wrong machine: no common MAC; ${macMsg}` };
      if (uuidKnown && macKnown)
        return { ok: true, method: 'uuid+mac', message: `system UUID and MAC ${common[0]} match` };
      if (uuidKnown)
        return {
          ok: true,
          method: 'uuid',
          message: `system UUID matches (${normUuid(f.hostUuid as string)})`,
        };
      const why = uuidMissing ? 'ramdisk has no product_uuid, fell back to MACs: ' : '';
      return { ok: true, method: 'mac', message: `${why}MAC ${common[0]} matches the BMC's` };
    }
  }
}
