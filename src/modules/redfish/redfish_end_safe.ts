// redfish_end_safe: leaves a node that did not finish safe: powered off and its virtual media
// ejected through its BMC, both read back. The run does this to every node a deploy or undeploy
// left unfinished (failed, unreachable, interrupted) unless on_deploy_failure: leave, as Ironic
// powers a node off after a failed deploy; a playbook may use it in a rescue too.
import { Type } from '../../schema/type-builder.js';
import { TsbmError } from '../../errors.js';
import { commonRedfishArgs } from '../../redfish/module-args.js';
import { defineModule } from '../../module-api/types.js';
import { findCdSlot, findSecondSlot, findSystem } from '../../redfish/discovery.js';
import { chooseResetType, postReset, powerStateOf, resetAction } from '../../redfish/power.js';
import { ejectMedia, mediaImage, mediaInserted } from '../../redfish/virtual-media.js';
import { clientFromArgs } from '../../redfish/pool.js';
import { waitForPowerState } from '../../redfish/power-wait.js';

const Args = Type.Object(
  {
    timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, default: 120, description: 'Seconds to wait for PowerState Off after ForceOff' })),
    ...commonRedfishArgs,
  },
  { additionalProperties: false },
);

export const redfishEndSafeModule = defineModule({
  name: 'redfish_end_safe',
  summary: 'Power a node off and eject its virtual media through its BMC, both read back',
  description:
    "Sends ForceOff unless the BMC reads the node Off and waits for PowerState Off; ejects every virtual medium inserted in the boot CD slot and the second slot (a kickstart volume); then reads both back. Returns power_state and media_inserted as read back. Fails, saying what it could not do, when the BMC does not answer: a node is never reported off unless the BMC said so.",
  runsOn: 'controller',
  args: Args,
  checkMode: true,
  idempotent: true,
  example: '- name: Leave the node safe\n  redfish_end_safe: {}\n',
  async run(ctx, args) {
    const client = clientFromArgs(ctx, args);
    const bmc = client.endpoint.bmc;
    const system = await findSystem(client);
    const cd = await findCdSlot(client, system);
    const second = (await findSecondSlot(client, system)).slot;
    const slots = [cd, ...(second ? [second] : [])];
    const inserted = slots.filter((s) => mediaInserted(s) || mediaImage(s) !== undefined);
    const on = powerStateOf(system) !== 'Off';
    if (ctx.check) {
      const would = [on ? 'power off' : '', inserted.length ? `eject ${inserted.map((s) => s.path).join(', ')}` : ''].filter(Boolean);
      return { changed: would.length > 0, msg: would.length ? `would ${would.join(' and ')}` : 'already Off, no media inserted', power_state: powerStateOf(system), media_inserted: inserted.length > 0 };
    }
    const done: string[] = [];
    if (on) {
      const action = await resetAction(client, system);
      const choice = chooseResetType('off', action.allowed);
      if (!choice) throw new TsbmError('runtime', `BMC ${bmc} offers no ResetType to power the node off (it offers ${action.allowed?.join(', ')})`, { host: ctx.host, hint: 'power it off in the BMC console' });
      await postReset(client, action, choice.type);
      const timeoutS = args.timeout ?? 120;
      await waitForPowerState(client, 'Off', choice.type, {
        timeoutMs: timeoutS * 1000,
        intervalMs: 2000,
        signal: ctx.signal,
        onProgress: (elapsedMs) => ctx.progress({ message: 'waiting for PowerState Off', current: Math.round(elapsedMs / 1000), total: timeoutS, unit: 's' }),
      }).catch((e: Error) => {
        throw new TsbmError('runtime', `BMC ${bmc}: the node did not read back Off within ${timeoutS}s after ${choice.type} (${e.message})`, { host: ctx.host, hint: 'power it off in the BMC console' });
      });
      done.push(`powered off (${choice.type})`);
    }
    for (const s of inserted) {
      await ejectMedia(client, s);
      done.push(`ejected ${mediaImage(s) ?? 'the media'} from ${s.path}`);
    }
    // Read back what the BMC now says, whatever was done: that is what is reported.
    const power = powerStateOf(await findSystem(client));
    const still = [];
    for (const s of slots) {
      const now = await client.get(s.path);
      if (mediaInserted(now)) still.push(s.path);
    }
    if (power !== 'Off' || still.length) {
      throw new TsbmError('runtime', `BMC ${bmc} reads the node back ${power}${still.length ? ` with media still in ${still.join(', ')}` : ''}${done.length ? ` after it ${done.join(', ')}` : ''}`, {
        host: ctx.host,
        hint: 'power it off and eject the media in the BMC console',
      });
    }
    return {
      changed: done.length > 0,
      msg: `${done.length ? `${done.join('; ')}; ` : ''}read back: Off, no virtual media inserted`,
      power_state: power,
      media_inserted: false,
    };
  },
});
