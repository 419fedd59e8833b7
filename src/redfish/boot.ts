// Boot source override: which target to ask for, a PATCH of only what must change, and a
// read-back so a BMC that silently ignores the override is caught (the PATCH's own answer when
// it carries the updated System; a GET otherwise).
import { TsbmError } from '../errors.js';
import { RedfishClient, type Resource } from './client.js';
import type { BootDevice } from './module-args.js';
import type { Json } from './transport.js';


const TARGETS: Record<BootDevice, string[]> = {
  disk: ['Hdd'],
  pxe: ['Pxe'],
  cd: ['Cd', 'UsbCd'], // some Supermicro boards expose virtual media only as UsbCd
  bios: ['BiosSetup'],
  usb: ['Usb', 'UsbCd'],
  none: ['None'],
};

export function chooseBootTarget(device: BootDevice, allowed: readonly string[] | undefined): string | undefined {
  const prefs = TARGETS[device];
  if (!allowed || allowed.length === 0) return prefs[0];
  return prefs.find((p) => allowed.includes(p));
}

export interface BootWant {
  device: BootDevice;
  persistent: boolean;
  mode?: 'UEFI' | 'Legacy' | undefined;
}

export interface BootPlan {
  target: string;
  enabled: 'Once' | 'Continuous' | 'Disabled';
  patch: Json | undefined;
  before: { target: unknown; enabled: unknown; mode: unknown };
}

function bootOf(system: Resource): Json {
  return (system.body.Boot as Json | undefined) ?? {};
}

/** What to PATCH (undefined when the override is already as wanted). */
export function planBoot(bmc: string, system: Resource, want: BootWant): BootPlan {
  const boot = bootOf(system);
  if (want.device === 'none') return planClear(boot);
  const allowed = Array.isArray(boot['BootSourceOverrideTarget@Redfish.AllowableValues'])
    ? (boot['BootSourceOverrideTarget@Redfish.AllowableValues'] as unknown[]).map(String)
    : undefined;
  const target = chooseBootTarget(want.device, allowed);
  if (!target) {
    throw new TsbmError('runtime', `BMC ${bmc} cannot boot System ${system.path} from ${want.device}: it offers ${allowed?.join(', ')}`, {
      hint: 'pick a device the BMC offers',
    });
  }
  const enabled = want.persistent ? 'Continuous' : 'Once';
  const patch: Json = {};
  if (boot.BootSourceOverrideTarget !== target || boot.BootSourceOverrideEnabled !== enabled) {
    // Several BMCs need target and enablement in one request.
    patch.BootSourceOverrideTarget = target;
    patch.BootSourceOverrideEnabled = enabled;
  }
  if (want.mode && boot.BootSourceOverrideMode !== undefined && boot.BootSourceOverrideMode !== want.mode) {
    const modes = boot['BootSourceOverrideMode@Redfish.AllowableValues'];
    if (Array.isArray(modes) && !modes.includes(want.mode)) {
      throw new TsbmError('runtime', `BMC ${bmc} does not offer boot mode ${want.mode} (it offers ${modes.join(', ')})`, { hint: 'drop `mode` or pick an offered one' });
    }
    patch.BootSourceOverrideMode = want.mode;
  }
  return {
    target,
    enabled,
    patch: Object.keys(patch).length ? patch : undefined,
    before: { target: boot.BootSourceOverrideTarget, enabled: boot.BootSourceOverrideEnabled, mode: boot.BootSourceOverrideMode },
  };
}

/**
 * Clearing: override Disabled, with target None where the BMC lists it (or lists nothing). A BMC
 * whose list lacks None wants a target it knows beside Disabled (sushy-tools refuses a bare
 * Disabled with 400): Hdd, what a node out of service boots anyway, else the current target.
 */
function planClear(boot: Json): BootPlan {
  const allowed = Array.isArray(boot['BootSourceOverrideTarget@Redfish.AllowableValues'])
    ? (boot['BootSourceOverrideTarget@Redfish.AllowableValues'] as unknown[]).map(String)
    : undefined;
  const current = typeof boot.BootSourceOverrideTarget === 'string' ? boot.BootSourceOverrideTarget : undefined;
  const target = !allowed || allowed.includes('None') ? 'None' : allowed.includes('Hdd') ? 'Hdd' : current && allowed.includes(current) ? current : undefined;
  const cleared = boot.BootSourceOverrideEnabled === 'Disabled' || (boot.BootSourceOverrideTarget === 'None' && boot.BootSourceOverrideEnabled === undefined);
  const patch: Json | undefined = cleared ? undefined : { BootSourceOverrideEnabled: 'Disabled', ...(target ? { BootSourceOverrideTarget: target } : {}) };
  return {
    target: target ?? current ?? 'None',
    enabled: 'Disabled',
    patch,
    before: { target: boot.BootSourceOverrideTarget, enabled: boot.BootSourceOverrideEnabled, mode: boot.BootSourceOverrideMode },
  };
}

/** Applies the plan and reads it back. Throws when the target did not stick; warns on Continuous-for-Once. */
export async function applyBoot(client: RedfishClient, system: Resource, plan: BootPlan, want: BootWant, warn: (m: string) => void): Promise<Resource> {
  // Nothing to change: the System was just read and showed the override as wanted.
  if (!plan.patch) return system;
  const res = await client.patch(system.path, { Boot: plan.patch }, system.etag);
  const after = RedfishClient.representation(res, system.path) ?? (await client.get(system.path));
  const boot = bootOf(after);
  const bmc = client.endpoint.bmc;
  if (plan.enabled === 'Disabled') {
    // Some BMCs report a cleared override as target None with no Enabled at all.
    const clear = boot.BootSourceOverrideEnabled === 'Disabled' || (boot.BootSourceOverrideTarget === 'None' && boot.BootSourceOverrideEnabled === undefined);
    if (!clear && plan.target !== 'None' && boot.BootSourceOverrideTarget === plan.target) {
      // sushy-tools' libvirt driver (and firmware like it) has no "no override": it keeps the
      // target it was given, Continuous. The node then boots that target, which is what it reads.
      warn(`BMC ${bmc} keeps a boot override: it reads back ${String(plan.target)} ${String(boot.BootSourceOverrideEnabled)} after Disabled was sent, so the node boots from ${String(plan.target)} until told otherwise`);
      return after;
    }
    if (!clear) {
      throw new TsbmError('runtime', `BMC ${bmc} reads back boot override ${JSON.stringify(boot.BootSourceOverrideTarget)} ${JSON.stringify(boot.BootSourceOverrideEnabled)} after it was cleared`, {
        hint: 'the BMC ignored the request; clear the boot override in its console',
      });
    }
    return after;
  }
  if (boot.BootSourceOverrideTarget !== plan.target) {
    throw new TsbmError('runtime', `BMC ${bmc} accepted boot override ${plan.target} for ${system.path} but reads back ${JSON.stringify(boot.BootSourceOverrideTarget)}`, {
      hint: 'the BMC ignored the boot override; check its firmware, or whether a BIOS setting locks the boot order',
    });
  }
  if (plan.enabled === 'Once' && boot.BootSourceOverrideEnabled === 'Continuous') {
    warn(`BMC ${bmc} reads back BootSourceOverrideEnabled Continuous for a requested Once; going on (a later step sets the boot device persistently)`);
  } else if (boot.BootSourceOverrideEnabled !== plan.enabled) {
    throw new TsbmError('runtime', `BMC ${bmc} reads back BootSourceOverrideEnabled ${JSON.stringify(boot.BootSourceOverrideEnabled)} after ${plan.enabled} was set`, {
      hint: 'the BMC ignored the boot override; check its firmware',
    });
  }
  if (want.mode && boot.BootSourceOverrideMode !== undefined && boot.BootSourceOverrideMode !== want.mode) {
    throw new TsbmError('runtime', `BMC ${bmc} reads back boot mode ${JSON.stringify(boot.BootSourceOverrideMode)} after ${want.mode} was set`, {
      hint: 'some BMCs only change the boot mode while powered off; power the node off first',
    });
  }
  return after;
}
