// redfish_power: decides what to ask the BMC for (src/redfish does the asking), waits for
// PowerState to hold, escalates graceful to force after `force_after`, and registers the
// node's identity (UUID, MACs) for later checks.
import { Type } from '../../schema/type-builder.js';
import { TsbmError } from '../../errors.js';
import type { RedfishClient, Resource } from '../../redfish/client.js';
import { commonRedfishArgs, POWER_REQUESTS, type PowerRequest } from '../../redfish/module-args.js';
import { defineModule } from '../../module-api/types.js';
import { macAddresses, powerStateOf, chooseResetType, postReset, resetAction } from '../../redfish/power.js';
import { findSystem } from '../../redfish/discovery.js';
import { WaitTimeoutError } from '../../util/wait.js';
import { waitForPowerState } from '../../redfish/power-wait.js';
import { clientFromArgs } from '../../redfish/pool.js';

const Args = Type.Object(
  {
    state: Type.Union(POWER_REQUESTS.map((s) => Type.Literal(s)), { description: 'Wanted power state or operation' }),
    wait: Type.Optional(Type.Boolean({ default: true, description: 'Poll PowerState until the wanted state holds' })),
    timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, default: 300, description: 'Seconds to wait for the power state' })),
    force_after: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'graceful_off/graceful_restart: force after this many seconds without effect' })),
    poll_interval: Type.Optional(Type.Number({ exclusiveMinimum: 0, default: 2, description: 'Longest pause between PowerState reads; they start every 0.25 s (never faster than the BMC answers) and space out to a tenth of the time waited' })),
    ...commonRedfishArgs,
  },
  { additionalProperties: false },
);

const WANTS: Record<PowerRequest, 'On' | 'Off' | undefined> = {
  on: 'On',
  off: 'Off',
  graceful_off: 'Off',
  restart: 'On',
  graceful_restart: 'On',
  cycle: 'On',
  nmi: undefined,
};

async function identity(client: RedfishClient, system: Resource): Promise<Record<string, unknown>> {
  return {
    power_state: powerStateOf(system),
    system_uuid: typeof system.body.UUID === 'string' ? system.body.UUID.toLowerCase() : null,
    mac_addresses: await macAddresses(client, system),
  };
}

export const redfishPowerModule = defineModule({
  name: 'redfish_power',
  summary: 'Power a node on, off, restart or cycle it through its BMC (Redfish)',
  description:
    'Reads the BMC from the host\'s driver_info (Ironic names). A redundant on/off changes nothing. Picks a ResetType the BMC offers; with wait it polls PowerState until it holds. Returns power_state, system_uuid and mac_addresses (from the System\'s EthernetInterfaces).',
  runsOn: 'controller',
  args: Args,
  checkMode: true,
  idempotent: true,
  example: '- name: Power the node off\n  redfish_power:\n    state: off\n    timeout: 300\n',
  async run(ctx, args) {
    const client = clientFromArgs(ctx, args);
    const system = await findSystem(client);
    const before = powerStateOf(system);
    const want = WANTS[args.state];
    const action = await resetAction(client, system);
    const isRestart = ['restart', 'graceful_restart', 'cycle'].includes(args.state);
    // Restarting a node that is off means powering it on (as Ironic's reboot does).
    const req: PowerRequest = isRestart && before === 'Off' ? 'on' : args.state;
    if (want !== undefined && !isRestart && before === want) {
      return { changed: false, msg: `already ${want}`, ...(await identity(client, system)) };
    }
    const choice = chooseResetType(req, action.allowed);
    if (!choice) {
      throw new TsbmError('runtime', `BMC ${client.endpoint.bmc} offers no ResetType for ${args.state} (it offers ${action.allowed?.join(', ')})`, {
        hint: 'pick another state the BMC supports',
        host: ctx.host,
      });
    }
    // An equivalent substitute (ForceRestart for a cycle) is routine: detail for -v, not a warning.
    if (choice.fallback) ctx.log(`BMC ${client.endpoint.bmc} does not offer the preferred ResetType for ${args.state}; using ${choice.type}`, 1);
    if (ctx.check) return { changed: true, msg: `would send ResetType ${choice.type} (PowerState ${before})`, reset_type: choice.type, ...(await identity(client, system)) };

    const acted = await postReset(client, action, choice.type);
    let final = system;
    if (want !== undefined && args.wait !== false) {
      const timeoutMs = (args.timeout ?? 300) * 1000;
      const intervalMs = (args.poll_interval ?? 2) * 1000;
      const forceType = args.state === 'graceful_off' ? 'ForceOff' : args.state === 'graceful_restart' ? 'ForceRestart' : undefined;
      const escalate =
        args.force_after !== undefined && forceType && choice.type !== forceType && (!action.allowed || action.allowed.includes(forceType))
          ? {
              afterMs: args.force_after * 1000,
              run: async () => {
                ctx.warn(`${choice.type} had no effect after ${args.force_after}s; sending ${forceType}`);
                await postReset(client, action, forceType);
              },
            }
          : undefined;
      try {
        final = await waitForPowerState(client, want, choice.type, {
          timeoutMs,
          intervalMs,
          signal: ctx.signal,
          escalate,
          onProgress: (elapsedMs) =>
            ctx.progress({ message: `waiting for PowerState ${want}`, current: Math.round(elapsedMs / 1000), total: Math.round(timeoutMs / 1000), unit: 's' }),
        });
      } catch (e) {
        if (e instanceof WaitTimeoutError) {
          throw new TsbmError('runtime', `BMC ${client.endpoint.bmc}: PowerState did not become ${want} within ${args.timeout ?? 300}s after ${choice.type} (${e.message})`, {
            hint: args.state === 'graceful_off' ? 'the OS may ignore ACPI shutdown; set force_after or use state: off' : 'raise timeout, or check the node in the BMC console',
            host: ctx.host,
          });
        }
        throw e;
      }
    } else {
      final = await findSystem(client);
    }
    return {
      changed: acted,
      msg: acted ? `sent ResetType ${choice.type}; PowerState ${powerStateOf(final)}` : `already ${want ?? before}`,
      reset_type: choice.type,
      ...(await identity(client, final)),
    };
  },
});
