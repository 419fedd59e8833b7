// anaconda_wait: waits for the installer of this node (started with kickstart_media's kickstart)
// to call back `end`, showing progress and elapsed time, then for the node to power itself off
// as the kickstart says. An `error` callback fails the node with the installer's own lines.
import { Type } from '../../schema/type-builder.js';
import { hostError } from '../../module-api/ramdisk-exec.js';
import { commonRedfishArgs } from '../../redfish/module-args.js';
import { defineModule } from '../../module-api/types.js';
import { fmtDuration } from '../../module-api/image-progress.js';
import { describeRefusals, installerLines, phaseWords, waitForInstall } from './install-wait.js';
import { findSystem } from '../../redfish/discovery.js';
import { clientFromArgs } from '../../redfish/pool.js';
import { powerStateOf } from '../../redfish/power.js';
import { WaitTimeoutError, waitUntil } from '../../util/wait.js';
import { installCallbacks } from './anaconda-shared.js';

const Args = Type.Object(
  {
    timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, default: 3600, description: 'Seconds the installer may take, from this task to its `end` callback' })),
    poweroff_timeout: Type.Optional(
      Type.Number({ minimum: 0, default: 600, description: 'Seconds to wait, after `end`, for the node to power itself off (the kickstart says poweroff); 0 does not wait' }),
    ),
    ...commonRedfishArgs,
  },
  { additionalProperties: false },
);

export const anacondaWaitModule = defineModule({
  name: 'anaconda_wait',
  summary: "Wait for a node's installer to call back end (progress, elapsed time); fail with its own lines on error",
  description:
    "Follows the node's callbacks on the run's HTTP server (registered by kickstart_media): start (%pre), end (%post) or error (%onerror, with the tail of the installer's logs). Progress shows the phase, the disk chosen and the elapsed time. error fails the node with the installer's lines; a time-out says what was heard (nothing, or start only) and any refused callbacks (wrong token, replayed). After end, waits for the BMC to report the node Off (the kickstart powers it off). Returns elapsed_s, started_after_s, disk.",
  runsOn: 'controller',
  args: Args,
  checkMode: true,
  changesNode: false,
  example: `- name: Wait for the installer
  anaconda_wait:
    timeout: 3600`,
  async run(ctx, a) {
    if (ctx.check) return { changed: false, msg: 'would wait for the installer to call back end' };
    const { callbacks } = await installCallbacks(ctx);
    const reg = callbacks.find(ctx.host);
    if (!reg) {
      throw hostError(
        ctx,
        'no kickstart was attached to this node in this run',
        'run kickstart_media before anaconda_wait (deploy-anaconda.yml does); a --resume cannot pick up an install a killed run started (its token died with it): run the playbook again for this node',
      );
    }
    const timeoutS = a.timeout ?? 3600;
    const outcome = await waitForInstall(reg, {
      timeoutMs: timeoutS * 1000,
      signal: ctx.signal,
      onTick: (ms, r) => ctx.progress({ message: `installer: ${phaseWords(r, ms)}`, current: Math.round(ms / 1000), total: timeoutS, unit: 's' }),
    });
    const refused = describeRefusals(reg);
    const took = fmtDuration(outcome.elapsedMs / 1000);
    if (outcome.kind === 'failed') {
      const disk = reg.disk && !reg.disk.ok ? ` No disk for the install: ${reg.disk.message}.` : '';
      throw hostError(
        ctx,
        `the installer reported an error after ${took}.${disk}${refused ? ` ${refused}.` : ''} Its last lines:\n${installerLines(outcome.body) || '  (it sent none)'}`,
        "the lines are the installer's; on the node's console (BMC) /tmp/anaconda.log has the rest",
      );
    }
    if (outcome.kind === 'timeout') {
      // Refused callbacks mean an installer ran a kickstart and reached tsbm: not this node's for this run.
      const heard =
        outcome.startedMs !== undefined
          ? `it started after ${fmtDuration(outcome.startedMs / 1000)} but did not finish${refused ? `; ${refused}` : ''}`
          : refused
            ? `no callback with this node's token for this run, but ${refused}: an installer reached tsbm with a kickstart that is not the one this run gave this node (media left in a slot, an inst.ks= of an earlier run, another node's)`
            : `no callback at all: the installer did not start its kickstart (did it boot, and find the kickstart volume?) or cannot reach tsbm at ${new URL(reg.url).origin}`;
      throw hostError(ctx, `the installer did not call back end within ${timeoutS}s: ${heard}`, 'watch the node on the BMC console; raise the timeout (anaconda_timeout) for slow installs');
    }
    if (refused) ctx.warn(`${ctx.host}: ${refused}`);
    let powered = 'not waited for power off';
    const offS = a.poweroff_timeout ?? 600;
    if (offS > 0) {
      const client = clientFromArgs(ctx, a);
      try {
        await waitUntil(async () => (powerStateOf(await findSystem(client)) === 'Off' ? true : undefined), {
          timeoutMs: offS * 1000,
          intervalMs: 2000,
          firstIntervalMs: 250,
          signal: ctx.signal,
          what: 'PowerState Off',
          onProgress: ({ elapsedMs }) => ctx.progress({ message: 'installed; waiting for the installer to power the node off', current: Math.round(elapsedMs / 1000), total: offS, unit: 's' }),
        });
        powered = 'the installer powered the node off';
      } catch (e) {
        if (!(e instanceof WaitTimeoutError)) throw e;
        ctx.warn(`${ctx.host}: the installer called back end but the node is not Off after ${offS}s; the next steps power cycle it`);
        powered = `still on after ${offS}s`;
      }
    }
    const disk = reg.disk?.ok ? reg.disk.device : null;
    return {
      changed: true,
      msg: `installed in ${took}${outcome.startedMs !== undefined ? ` (started after ${fmtDuration(outcome.startedMs / 1000)})` : ''}${disk ? ` on ${disk}` : ''}; ${powered}`,
      elapsed_s: Math.round(outcome.elapsedMs / 1000),
      started_after_s: outcome.startedMs === undefined ? null : Math.round(outcome.startedMs / 1000),
      disk,
      refused_callbacks: reg.refused.length,
    };
  },
});
