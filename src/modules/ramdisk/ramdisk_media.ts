// ramdisk_media: the node's own small volume (label TSBM-NODE) in the BMC's second virtual media
// slot, read by tsbm's ramdisk at boot: the controller's public key, the run's callback URL with
// a token made for this node and run, and an optional static network (Ironic's network_data).
// The ramdisk then calls home with its addresses and host key, and wait_agent needs no ssh_host.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type } from '../../schema/type-builder.js';
import { publicKeyLine } from '../../connection/public-key.js';
import { connectionSpecFor } from '../../inventory/connection-vars.js';
import { firstSet } from '../../inventory/node-data.js';
import { hostError } from '../../module-api/ramdisk-exec.js';
import { defineModule } from '../../module-api/types.js';
import { isLoopback } from '../../http/run-file-server.js';
import { NODE_VOLUME_LABEL } from '../../ramdisk/boot-files.js';
import { buildNodeVolume, NetworkDataError, networkConf } from '../../ramdisk/node-volume.js';
import { commonRedfishArgs } from '../../redfish/module-args.js';
import { findSecondSlot, findSystem } from '../../redfish/discovery.js';
import { clientFromArgs } from '../../redfish/pool.js';
import { ejectMedia, insertMedia, mediaImage, mediaInserted } from '../../redfish/virtual-media.js';
import { agentCallbacks, rememberRegistration } from './agent-shared.js';

const Args = Type.Object(
  {
    state: Type.Optional(Type.Union([Type.Literal('inserted'), Type.Literal('ejected')], { default: 'inserted' })),
    authorized_keys: Type.Optional(
      Type.String({ description: "Public keys the ramdisk authorizes for root (authorized_keys lines). Default: the controller's key, ssh_private_key_file's .pub or computed from it" }),
    ),
    call_home: Type.Optional(Type.Boolean({ default: true, description: 'Give the ramdisk the run\'s callback URL and a token for this node: wait_agent then needs no ssh_host and pins the host key the ramdisk reports' })),
    network_data: Type.Optional(
      Type.Object({}, { additionalProperties: true, description: "Static network for the ramdisk, Ironic's network_data (links, networks, services). Default: the host's network_data; none: DHCP" }),
    ),
    ...commonRedfishArgs,
  },
  { additionalProperties: false },
);

export const ramdiskMediaModule = defineModule({
  name: 'ramdisk_media',
  summary: "Attach the node's own volume (controller key, callback, static network) for tsbm's ramdisk in a second virtual media slot",
  description:
    "Builds an ISO 9660 volume labelled TSBM-NODE holding authorized_keys (the controller's public key), with call_home the run's callback URL and a token made for this node and run (redacted everywhere), and with network_data (Ironic's format) the static network the ramdisk sets up instead of DHCP. Serves it from tsbm's HTTP server and inserts it in the BMC's second virtual media slot (another CD/DVD, else a USB stick slot), read back. The ramdisk `tsbm ramdisk build` makes reads it at boot, then POSTs its addresses, MACs, system UUID and SSH host key to the callback; wait_agent waits for that report when the host has no ssh_host and accepts only the reported key. state: ejected ejects the second slot.",
  runsOn: 'controller',
  args: Args,
  checkMode: true,
  idempotent: true,
  example: `- name: Attach the node's volume (key, callback)
  ramdisk_media: {}`,
  async run(ctx, a) {
    const client = clientFromArgs(ctx, a);
    const system = await findSystem(client);
    const { slot, others } = await findSecondSlot(client, system);
    if (a.state === 'ejected') {
      if (!slot) return { changed: false, msg: 'no second virtual media slot' };
      if (!mediaInserted(slot) && mediaImage(slot) === undefined) return { changed: false, msg: `nothing in ${slot.path}`, media_slot: slot.path };
      if (ctx.check) return { changed: true, msg: `would eject ${slot.path}`, media_slot: slot.path };
      await ejectMedia(client, slot);
      return { changed: true, msg: `ejected the node volume from ${slot.path}`, media_slot: slot.path };
    }
    if (!slot) {
      throw hostError(
        ctx,
        `BMC ${client.endpoint.bmc} has no second virtual media slot for the ${NODE_VOLUME_LABEL} volume (besides the CD it has ${others.length ? others.join(', ') : 'no other slot'})`,
        'give the host ssh_host (a DHCP reservation) and leave ramdisk_media out: the ramdisk then needs its key some other way (an IPA-style ramdisk with the key built in)',
      );
    }
    let keys = a.authorized_keys;
    if (!keys) {
      const spec = connectionSpecFor(ctx.host, ctx.vars);
      if (!spec.privateKeyFile) throw hostError(ctx, 'no controller key to authorize on the ramdisk: the host has no ssh_private_key_file', 'set ssh_private_key_file, or give ramdisk_media authorized_keys');
      try {
        keys = publicKeyLine(spec.privateKeyFile, spec.privateKeyPassphraseEnv ? process.env[spec.privateKeyPassphraseEnv] : undefined);
      } catch (e) {
        throw hostError(ctx, (e as Error).message, 'put the public key beside it as KEY.pub, or give ramdisk_media authorized_keys');
      }
    }
    const networkData = a.network_data ?? (firstSet(undefined, ctx.vars, 'network_data') as unknown);
    if (networkData !== undefined) {
      try {
        networkConf(networkData);
      } catch (e) {
        if (e instanceof NetworkDataError) throw hostError(ctx, e.message, "fix the host's network_data (Ironic's format: links with ethernet_mac_address, networks of type ipv4/ipv6/ipv4_dhcp, services)");
        throw e;
      }
    }
    const callHome = a.call_home !== false;
    const { server, callbacks } = await agentCallbacks(ctx);
    const facts = { media_slot: slot.path, call_home: callHome, static_network: networkData !== undefined };
    if (ctx.check) return { changed: true, msg: `would insert the ${NODE_VOLUME_LABEL} volume in ${slot.path}`, ...facts };
    if (callHome && isLoopback(new URL(server.url).hostname) && !isLoopback(new URL(`https://${client.endpoint.bmc}`).hostname)) {
      ctx.warn(`tsbm's HTTP server listens on loopback (${server.url}); the ramdisk on ${ctx.host} cannot call home: set tsbm_http_address to a controller address the nodes reach`);
    }
    const reg = callHome ? callbacks.register(ctx.host) : undefined;
    if (reg) rememberRegistration(ctx, reg);
    const volume = buildNodeVolume({ authorizedKeys: keys, ...(reg ? { callback: { url: reg.url, token: ctx.secret(reg.token) } } : {}), ...(networkData !== undefined ? { networkData } : {}) });
    // The volume holds the node's token: a private file of this run, gone when the run ends.
    const dir = join(ctx.services.tmpDir, 'node-volume');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, `${ctx.host.replace(/[^A-Za-z0-9._-]/g, '_')}-${reg?.id ?? 'static'}.iso`);
    writeFileSync(file, volume, { mode: 0o600 });
    chmodSync(file, 0o600);
    const url = ctx.secret(await server.publish(file));
    if (mediaInserted(slot) || mediaImage(slot) !== undefined) await ejectMedia(client, slot);
    await insertMedia(client, slot, url);
    const after = await client.get(slot.path);
    if (!mediaInserted(after) || mediaImage(after) !== url) {
      reg?.close();
      throw hostError(ctx, `BMC ${client.endpoint.bmc} accepted the ${NODE_VOLUME_LABEL} volume but ${slot.path} reads back Image ${JSON.stringify(after.body.Image)}, Inserted ${JSON.stringify(after.body.Inserted)}`, 'check that the BMC can reach tsbm_http_address');
    }
    return { changed: true, msg: `inserted the ${NODE_VOLUME_LABEL} volume in ${slot.path}${reg ? '; the ramdisk calls home' : ''}`, ...facts, ...(reg ? { callback_url: reg.url } : {}) };
  },
});
