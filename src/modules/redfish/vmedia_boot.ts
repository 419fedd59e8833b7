// vmedia_boot: put an ISO in the node's virtual CD and make the next boot use it (or eject).
// A local ISO is served by the run's built-in HTTP server, unless the node boots it after the
// run too (outlives_run): then it comes from a lasting server (served_from), as that server
// stops with the run. Everything is read back (from the BMC's own answer where it shows it).
import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { Type } from '../../schema/type-builder.js';
import { TsbmError } from '../../errors.js';
import { commonRedfishArgs } from '../../redfish/module-args.js';
import { defineModule, type ModuleContext } from '../../module-api/types.js';
import { lastingUrlOf } from '../../http/lasting-url.js';
import { isLoopback, runFileServer } from '../../http/run-file-server.js';
import { applyBoot, planBoot } from '../../redfish/boot.js';
import { findCdSlot, findSystem } from '../../redfish/discovery.js';
import { ejectMedia, insertMedia, mediaImage, mediaInserted } from '../../redfish/virtual-media.js';
import { clientFromArgs } from '../../redfish/pool.js';

const Args = Type.Object(
  {
    image: Type.Optional(
      Type.String({ description: 'http(s) URL the BMC can reach, or a local ISO path served by tsbm (tsbm_http_address sets the address BMCs reach)' }),
    ),
    state: Type.Optional(Type.Union([Type.Literal('inserted'), Type.Literal('ejected')], { default: 'inserted' })),
    boot: Type.Optional(Type.Boolean({ default: true, description: 'Set a one-time boot override to the virtual CD' })),
    mode: Type.Optional(Type.Union([Type.Literal('uefi'), Type.Literal('legacy')], { default: 'uefi', description: 'Boot mode, sent only when it must change' })),
    outlives_run: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          "true when the node boots this image after the run too (a persistent boot override): a local file is then never served from the run's HTTP server, which stops with the run; it needs served_from",
      }),
    ),
    served_from: Type.Optional(
      Type.String({
        description:
          'With outlives_run: the URL a lasting web server serves the local image at, or its directory (ending in /, the file name is appended). Empty: unset',
      }),
    ),
    ...commonRedfishArgs,
  },
  { additionalProperties: false },
);

async function imageUrl(ctx: ModuleContext, image: string, bmc: string, lasting?: { servedFrom: string | undefined }): Promise<string> {
  if (lasting) {
    const at = lastingUrlOf(image, lasting.servedFrom, 'image');
    if ('problem' in at) throw new TsbmError('runtime', at.problem, { hint: at.fix, host: ctx.host });
    if (at.url !== image) await localFile(ctx, image);
    return at.url;
  }
  if (/^https?:\/\//i.test(image)) return image;
  const file = await localFile(ctx, image);
  const server = await runFileServer(ctx.services, ctx.vars);
  const url = await server.publish(file);
  const bmcHost = new URL(`https://${bmc}`).hostname;
  if (isLoopback(new URL(server.url).hostname) && !isLoopback(bmcHost)) {
    ctx.warn(`serving ${file} on loopback (${server.url}); BMC ${bmc} cannot reach it: set tsbm_http_address to a controller address the BMC can reach`);
  }
  ctx.log(`serving ${file} at ${url}`, 2);
  return url;
}

async function localFile(ctx: ModuleContext, image: string): Promise<string> {
  const file = isAbsolute(image) ? image : resolve(ctx.services.playbookDir, image);
  const st = await stat(file).catch(() => undefined);
  if (!st?.isFile()) {
    throw new TsbmError('runtime', `vmedia_boot image ${image} is neither an http(s) URL nor a readable local file (looked at ${file})`, {
      hint: 'give an http(s) URL the BMC can reach, or the path of an ISO on the controller',
      host: ctx.host,
    });
  }
  return file;
}

export const vmediaBootModule = defineModule({
  name: 'vmedia_boot',
  summary: 'Insert an ISO as virtual media and boot from it once (Redfish), or eject it',
  description:
    'Ejects what is inserted, inserts the image (standard InsertMedia, HPE OEM action, or PATCH), sets the boot override to Cd (UsbCd where only that is offered), Once, UEFI, and reads it all back. A local ISO is served from the built-in HTTP server for the run.',
  runsOn: 'controller',
  args: Args,
  checkMode: true,
  idempotent: true,
  example: '- name: Boot the ramdisk from virtual media\n  vmedia_boot:\n    image: files/ramdisk.iso\n',
  async run(ctx, args) {
    const client = clientFromArgs(ctx, args);
    if (args.state === 'ejected') {
      // The System is not read: only the slot matters (found through it once per run).
      const slot = await findCdSlot(client);
      const current = mediaImage(slot);
      const changed = mediaInserted(slot) || current !== undefined;
      if (ctx.check || !changed) return { changed, msg: changed ? `would eject ${current ?? 'media'}` : 'no media inserted', media_slot: slot.path };
      const shown = await ejectMedia(client, slot);
      const after = typeof shown === 'object' ? shown : await client.get(slot.path);
      if (mediaInserted(after)) {
        throw new TsbmError('runtime', `BMC ${client.endpoint.bmc} still shows media in ${slot.path} after ejecting`, { hint: 'eject it in the BMC console', host: ctx.host });
      }
      return { changed: true, msg: `ejected ${current ?? 'media'}`, media_slot: slot.path };
    }

    if (!args.image) throw new TsbmError('options', 'vmedia_boot needs `image` unless state is ejected', { host: ctx.host, task: ctx.task });
    const system = await findSystem(client);
    const slot = await findCdSlot(client, system);
    const current = mediaImage(slot);
    const inserted = mediaInserted(slot);
    const url = await imageUrl(ctx, args.image, client.endpoint.bmc, args.outlives_run ? { servedFrom: args.served_from } : undefined);
    const needMedia = !(inserted && current === url);
    const mode = args.mode === 'legacy' ? 'Legacy' : 'UEFI';
    const want = { device: 'cd' as const, persistent: false, mode } as const;
    const plan = args.boot === false ? undefined : planBoot(client.endpoint.bmc, system, want);
    const changed = needMedia || plan?.patch !== undefined;
    if (ctx.check) {
      return { changed, msg: changed ? `would insert ${url}${plan?.patch ? ` and boot ${plan.target} once` : ''}` : 'already inserted and set', image_url: url, media_slot: slot.path };
    }
    if (needMedia) {
      let target = slot;
      if (inserted || current !== undefined) {
        // The eject changed the slot: its answer's ETag, or none (the PATCH then reads it).
        const shown = await ejectMedia(client, slot);
        target = typeof shown === 'object' ? { ...slot, etag: shown.etag } : { ...slot, etag: undefined };
      }
      const after = (await insertMedia(client, target, url)) ?? (await client.get(slot.path));
      if (!mediaInserted(after) || mediaImage(after) !== url) {
        throw new TsbmError('runtime', `BMC ${client.endpoint.bmc} accepted the image but ${slot.path} reads back Image ${JSON.stringify(after.body.Image)}, Inserted ${JSON.stringify(after.body.Inserted)}`, {
          hint: 'check that the BMC can reach the image URL (tsbm_http_address must be an address the BMC can reach)',
          host: ctx.host,
        });
      }
    }
    let bootTarget: string | undefined;
    if (plan) {
      // The System read above: inserting media changes the slot, not the System (a BMC whose
      // System ETag moved anyway answers 412, and the PATCH reads it once and tries again).
      await applyBoot(client, system, plan, want, (m) => ctx.warn(m));
      bootTarget = plan.target;
    }
    return {
      changed,
      msg: `${needMedia ? `inserted ${url}` : `${url} already inserted`}${bootTarget ? `; next boot from ${bootTarget}` : ''}`,
      image_url: url,
      media_slot: slot.path,
      boot_target: bootTarget ?? null,
    };
  },
});
