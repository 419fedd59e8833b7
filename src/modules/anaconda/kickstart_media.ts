// kickstart_media: renders a node's kickstart (ks_template) with a callback token made for this
// node and run, checks it, and puts it where the installer finds it: an ISO volume labelled
// OEMDRV in the BMC's second virtual media slot, or, for installers whose boot configuration
// carries inst.ks=, at instance_info.ks_url on tsbm's own HTTP server. Or ejects it again.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { Type } from '../../schema/type-builder.js';
import { TsbmError } from '../../errors.js';
import { hostError } from '../../module-api/ramdisk-exec.js';
import { firstSet } from '../../inventory/node-data.js';
import { assertAllowedPath } from '../../module-api/allowed-paths.js';
import { commonRedfishArgs } from '../../redfish/module-args.js';
import { defineModule, type ModuleContext } from '../../module-api/types.js';
import { KickstartPlanError, anacondaHints, buildKickstart, chooseInstallDisk, planSource } from './kickstart-plan.js';
import { sourceLine } from './kickstart-source.js';
import { buildOemdrvIso, OEMDRV_LABEL } from './oemdrv.js';
import { ksUrlPath } from './ks-url-path.js';
import { isLoopback } from '../../http/run-file-server.js';
import { findSecondSlot, findSystem } from '../../redfish/discovery.js';
import { clientFromArgs } from '../../redfish/pool.js';
import { ejectMedia, insertMedia, mediaImage, mediaInserted } from '../../redfish/virtual-media.js';
import { installCallbacks, kickstartTemplate } from './anaconda-shared.js';

const Args = Type.Object(
  {
    state: Type.Optional(Type.Union([Type.Literal('inserted'), Type.Literal('ejected')], { default: 'inserted' })),
    template: Type.Optional(
      Type.String({ description: 'Kickstart template (Handlebars) on the controller. Default: instance_info.ks_template, then ks_template, then the shipped playbooks/templates/ks.cfg.hbs' }),
    ),
    image: Type.Optional(Type.String({ description: 'Default: instance_info.image_source (oci://..., http(s) tarball or image, tree URL ending in /, file://)' })),
    pull_secret: Type.Optional(Type.String({ description: 'Default: instance_info.image_pull_secret. Never in the kickstart: the installer fetches it once from the callback endpoint' })),
    tls_verify: Type.Optional(Type.Boolean({ default: true, description: "false marks an oci:// image's registry insecure in the installer" })),
    ks_url: Type.Optional(
      Type.String({
        description:
          "Where an installer whose boot configuration carries inst.ks= fetches its kickstart: a URL on tsbm's HTTP server (tsbm_http_address, with a fixed tsbm_http_port). Given, no OEMDRV volume is made; needed when the BMC has one virtual media slot. Default: instance_info.ks_url",
      }),
    ),
    ...commonRedfishArgs,
  },
  { additionalProperties: false },
);

/** What to throw for an error from planning: a plan error names the host and what to do. */
async function planError(ctx: ModuleContext, e: unknown): Promise<unknown> {
  return e instanceof KickstartPlanError ? hostError(ctx, e.message, e.hint) : e;
}

/** The kickstart at ks_url on tsbm's server: the URL must be that server's origin, at a path of its own. */
function ksUrlPathOn(ctx: ModuleContext, ksUrl: string, serverUrl: string): string {
  let u: URL;
  try {
    u = new URL(ksUrl);
  } catch {
    throw hostError(ctx, `instance_info.ks_url ${JSON.stringify(ksUrl)} is not a URL`, 'give http://ADDRESS:PORT/PATH on tsbm_http_address');
  }
  if (u.origin !== new URL(serverUrl).origin) {
    throw hostError(
      ctx,
      `instance_info.ks_url ${ksUrl} is not a path on tsbm's HTTP server (${serverUrl}), so tsbm cannot serve the node's kickstart there`,
      'set tsbm_http_address and tsbm_http_port so that ks_url names that server, with a path of its own (e.g. /ks/NODE.cfg)',
    );
  }
  const p = ksUrlPath(u);
  if ('problem' in p) throw hostError(ctx, `instance_info.ks_url ${ksUrl} cannot be the kickstart's URL: ${p.problem}`, 'give ks_url a path of its own on tsbm\'s HTTP server (e.g. /ks/NODE.cfg)');
  return p.path;
}

export const kickstartMediaModule = defineModule({
  name: 'kickstart_media',
  summary: "Render a node's kickstart and attach it as an OEMDRV volume in a second virtual media slot (or serve it at ks_url)",
  description:
    "Plans the install source from image_source (oci:// -> ostreecontainer, http(s) tarball or image -> liveimg --checksum with an image_os_hash_value, a URL ending in / -> url, file:// -> liveimg from tsbm's HTTP server), registers the node with the run's installer callback endpoint (a fresh token per node and run, redacted everywhere), renders ks_template (strict Handlebars; see playbooks/templates/ks.cfg.hbs for the values) and checks it (known commands, one source, poweroff, the three callbacks, no pull secret in clear). Then builds an ISO 9660 volume labelled OEMDRV with ks.cfg, serves it and inserts it in the BMC's second virtual media slot (another CD/DVD slot, else a USB stick slot), read back. A BMC with one slot is refused unless ks_url is given: then the kickstart is served at that path of tsbm's HTTP server until the installer starts. state: ejected ejects the second slot.",
  runsOn: 'controller',
  args: Args,
  checkMode: true,
  idempotent: true,
  example: `- name: Attach the kickstart
  kickstart_media:
    tls_verify: "{{ image_tls_verify }}"`,
  async run(ctx, a) {
    const client = clientFromArgs(ctx, a);
    const system = await findSystem(client);
    const ksUrl = firstSet(a.ks_url, ctx.vars, 'instance_info.ks_url') as string | undefined;
    const { slot, others } = ksUrl ? { slot: undefined, others: [] } : await findSecondSlot(client, system);

    if (a.state === 'ejected') {
      if (!slot) return { changed: false, msg: ksUrl ? 'kickstart served at ks_url: no media to eject' : 'no second virtual media slot' };
      const inserted = mediaInserted(slot) || mediaImage(slot) !== undefined;
      if (!inserted) return { changed: false, msg: `nothing in ${slot.path}`, media_slot: slot.path };
      if (ctx.check) return { changed: true, msg: `would eject ${mediaImage(slot) ?? 'media'} from ${slot.path}`, media_slot: slot.path };
      await ejectMedia(client, slot);
      if (mediaInserted(await client.get(slot.path))) {
        throw hostError(ctx, `BMC ${client.endpoint.bmc} still shows media in ${slot.path} after ejecting`, 'eject it in the BMC console');
      }
      return { changed: true, msg: `ejected the kickstart volume from ${slot.path}`, media_slot: slot.path };
    }

    if (!slot && !ksUrl) {
      throw hostError(
        ctx,
        `BMC ${client.endpoint.bmc} has no second virtual media slot for the kickstart's ${OEMDRV_LABEL} volume (besides the CD it has ${others.length ? others.join(', ') : 'no other slot'})`,
        'boot an installer ISO whose boot configuration carries inst.ks=URL and set instance_info.ks_url to that URL on tsbm_http_address (tsbm serves the kickstart there), or use a BMC with a second CD/DVD or USB virtual media slot',
      );
    }
    let plan: ReturnType<typeof planSource>;
    try {
      plan = planSource(ctx.vars, { image: a.image, pullSecret: a.pull_secret, tlsVerify: a.tls_verify !== false }, (v) => void ctx.secret(v));
    } catch (e) {
      throw await planError(ctx, e);
    }
    let hints: ReturnType<typeof anacondaHints>;
    try {
      hints = anacondaHints(ctx.vars);
    } catch (e) {
      throw await planError(ctx, e);
    }
    const { server, callbacks } = await installCallbacks(ctx);
    const loopback = isLoopback(new URL(server.url).hostname);
    if (loopback && !isLoopback(new URL(`https://${client.endpoint.bmc}`).hostname)) {
      ctx.warn(`tsbm's HTTP server listens on loopback (${server.url}); the installer on ${ctx.host} cannot call back: set tsbm_http_address to a controller address the nodes reach`);
    }
    if (plan.source.file) {
      const file = isAbsolute(plan.source.file) ? plan.source.file : resolve(ctx.services.playbookDir, plan.source.file);
      assertAllowedPath(ctx, 'image_source', file);
      plan.source.location = await server.publish(file).catch((e: unknown) => {
        throw hostError(ctx, `image file ${file} cannot be served: ${(e as Error).message}`, 'fix the file:// path in image_source');
      });
    }
    const reg = ctx.check
      ? undefined
      : callbacks.register(ctx.host, {
          ...(plan.authJson ? { pullSecret: plan.authJson } : {}),
          chooseDisk: (json) => chooseInstallDisk(json, hints),
        });
    const callback = reg ? { url: reg.url, token: ctx.secret(reg.token) } : { url: `${server.url}/install/${'0'.repeat(24)}`, token: 'check-mode-token' };
    const template = kickstartTemplate(ctx, a.template);
    let built: Awaited<ReturnType<typeof buildKickstart>>;
    try {
      built = await buildKickstart({
        vars: ctx.vars,
        host: ctx.host,
        task: ctx.task,
        template: template.text,
        templateFile: template.file,
        plan,
        callback,
        signal: ctx.signal,
        secret: (v) => void ctx.secret(v),
      });
    } catch (e) {
      reg?.close();
      if (e instanceof TsbmError) throw e;
      throw await planError(ctx, e);
    }
    if (built.problems.length) {
      reg?.close();
      throw hostError(ctx, `the kickstart from ${template.file} is not usable: ${built.problems.join('; ')}`, 'fix ks_template (playbooks/templates/ks.cfg.hbs shows what tsbm needs)');
    }
    const facts = { source_kind: plan.source.kind, source: plan.source.shown, source_line: sourceLine({ ...plan.source, location: plan.source.location || plan.source.shown }), template: template.file, callback_url: callback.url };

    if (ksUrl) {
      const path = ksUrlPathOn(ctx, ksUrl, server.url);
      if (ctx.check) return { changed: true, msg: `would serve the kickstart at ${ksUrl}`, kickstart_url: ksUrl, ...facts };
      try {
        callbacks.serveKickstart(path, reg!, built.text);
      } catch (e) {
        reg?.close();
        throw hostError(ctx, `instance_info.ks_url ${ksUrl} cannot be served: ${(e as Error).message}`, 'give ks_url a path of its own on tsbm\'s HTTP server (e.g. /ks/NODE.cfg)');
      }
      return { changed: true, msg: `kickstart (${plan.source.kind} ${plan.source.shown}) served at ${ksUrl} until the installer starts`, kickstart_url: ksUrl, ...facts };
    }
    const media = slot!;
    if (ctx.check) return { changed: true, msg: `would insert the kickstart as an ${OEMDRV_LABEL} volume (${plan.source.kind} ${plan.source.shown}) in ${media.path}`, media_slot: media.path, ...facts };

    // The volume holds the node's token: a private file of this run, gone when the run ends.
    const dir = join(ctx.services.tmpDir, 'kickstart');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, `${ctx.host.replace(/[^A-Za-z0-9._-]/g, '_')}-${reg!.id}.iso`);
    writeFileSync(file, buildOemdrvIso(built.text), { mode: 0o600 });
    chmodSync(file, 0o600);
    // The volume's URL reads the node's token: it stays out of output and journals.
    const url = ctx.secret(await server.publish(file));
    if (mediaInserted(media) || mediaImage(media) !== undefined) await ejectMedia(client, media);
    await insertMedia(client, media, url);
    const after = await client.get(media.path);
    if (!mediaInserted(after) || mediaImage(after) !== url) {
      reg!.close();
      throw hostError(ctx, `BMC ${client.endpoint.bmc} accepted the kickstart volume but ${media.path} reads back Image ${JSON.stringify(after.body.Image)}, Inserted ${JSON.stringify(after.body.Inserted)}`, 'check that the BMC can reach tsbm_http_address');
    }
    return { changed: true, msg: `inserted the kickstart as an ${OEMDRV_LABEL} volume (${plan.source.kind} ${plan.source.shown}) in ${media.path}`, media_slot: media.path, ...facts };
  },
});
