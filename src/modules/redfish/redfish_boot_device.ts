// redfish_boot_device: set the boot source override (once or persistent, optional mode) and read it back.
import { Type } from '../../schema/type-builder.js';
import { BOOT_DEVICES, commonRedfishArgs } from '../../redfish/module-args.js';
import { defineModule } from '../../module-api/types.js';
import { applyBoot, planBoot } from '../../redfish/boot.js';
import { findSystem } from '../../redfish/discovery.js';
import { clientFromArgs } from '../../redfish/pool.js';

const Args = Type.Object(
  {
    device: Type.Union(BOOT_DEVICES.map((d) => Type.Literal(d)), { description: 'disk (Hdd), pxe, cd (Cd or UsbCd), bios (BiosSetup), usb, or none: clear the override (Disabled)' }),
    persistent: Type.Optional(Type.Boolean({ default: false, description: 'Continuous instead of Once' })),
    mode: Type.Optional(Type.Union([Type.Literal('uefi'), Type.Literal('legacy')], { description: 'Boot mode; sent only when it must change' })),
    ...commonRedfishArgs,
  },
  { additionalProperties: false },
);

export const redfishBootDeviceModule = defineModule({
  name: 'redfish_boot_device',
  summary: 'Set the next (or every) boot device of a node through its BMC (Redfish)',
  description: "PATCHes Boot.BootSourceOverrideTarget/Enabled (and Mode when it differs) with If-Match, then reads it back. device: none clears the override (Enabled Disabled, target None), so the node follows its own boot order; a BMC that does not list None gets Hdd with Disabled (sushy-tools refuses a bare Disabled), and one that keeps an override anyway (sushy-tools reads back Hdd Continuous) is reported with a warning: the node then boots from its disk.",
  runsOn: 'controller',
  args: Args,
  checkMode: true,
  idempotent: true,
  example: '- name: Boot from disk from now on\n  redfish_boot_device:\n    device: disk\n    persistent: true\n',
  async run(ctx, args) {
    const client = clientFromArgs(ctx, args);
    const system = await findSystem(client);
    const want = {
      device: args.device,
      persistent: args.persistent ?? false,
      mode: args.mode === undefined ? undefined : args.mode === 'uefi' ? ('UEFI' as const) : ('Legacy' as const),
    };
    const plan = planBoot(client.endpoint.bmc, system, want);
    const changed = plan.patch !== undefined;
    const facts = { boot_target: plan.target, boot_enabled: plan.enabled };
    if (ctx.check) return { changed, msg: changed ? `would set boot ${plan.target} ${plan.enabled}` : 'already set', ...facts };
    const after = await applyBoot(client, system, plan, want, (m) => ctx.warn(m));
    // What the BMC reads back (a BMC that cannot disable its override keeps it enabled).
    const read = (after.body.Boot as Record<string, unknown> | undefined) ?? {};
    const now = `${String(read.BootSourceOverrideTarget ?? plan.target)} ${String(read.BootSourceOverrideEnabled ?? plan.enabled)}`;
    return {
      changed,
      msg: changed ? `boot ${now}` : `already boot ${now}`,
      diff: changed ? { before: JSON.stringify(plan.before), after: JSON.stringify(plan.patch) } : undefined,
      ...facts,
    };
  },
});
