// installer_boot: which ISO boots a node's installer. installer_iso as it is, or, where the
// installer is served as files (Ironic's instance_info kernel, ramdisk and stage2), a UEFI boot
// ISO tsbm builds on the controller with inst.stage2= (and inst.ks= for ks_url) on the kernel
// command line. vmedia_boot then inserts what it returns.
import { Type } from '../../schema/type-builder.js';
import { firstSet } from '../../inventory/node-data.js';
import { assertAllowedPath } from '../../module-api/allowed-paths.js';
import { defineModule } from '../../module-api/types.js';
import { hostError } from '../../module-api/ramdisk-exec.js';
import { InstallerBootError, isRemoteStage2, planInstallerBoot } from './installer-boot.js';
import { installerBootIso } from './installer-boot-controller.js';
import { runFileServer } from '../../http/run-file-server.js';
import { isAbsolute, resolve } from 'node:path';

const Args = Type.Object(
  {
    iso: Type.Optional(Type.String({ description: 'The installer ISO as it is (URL or controller path). Default: installer_iso, then instance_info.installer_iso. Not with kernel/ramdisk/stage2' })),
    kernel: Type.Optional(Type.String({ description: "The installer's kernel (images/pxeboot/vmlinuz): http(s) URL or controller path. Default: instance_info.kernel" })),
    ramdisk: Type.Optional(Type.String({ description: "The installer's initrd (images/pxeboot/initrd.img). Default: instance_info.ramdisk" })),
    stage2: Type.Optional(
      Type.String({
        description:
          "inst.stage2: the install tree or images/install.img as a URL the node reaches (http(s), ftp, nfs:), or a controller path tsbm serves. Default: instance_info.stage2",
      }),
    ),
    kernel_append_params: Type.Optional(Type.String({ description: 'More kernel arguments (console=ttyS0,115200 ...). Default: instance_info.kernel_append_params, then driver_info.kernel_append_params (as Ironic reads it)' })),
    bootloader: Type.Optional(
      Type.String({
        description:
          "An ESP image (FAT12/16, with EFI/BOOT/BOOTX64.EFI: the distribution's images/efiboot.img, signed for Secure Boot) or an EFI binary, URL or controller path. Default: driver_info.bootloader, else GRUB built on the controller with grub-mkstandalone (grub-efi-amd64-bin)",
      }),
    ),
    ks_url: Type.Optional(Type.String({ description: 'Put inst.ks=URL on the command line (the kickstart served at ks_url). Default: instance_info.ks_url; unset, the installer reads the OEMDRV volume' })),
    tls_verify: Type.Optional(Type.Boolean({ default: true, description: 'false: https downloads of kernel, ramdisk and bootloader skip certificate checks' })),
  },
  { additionalProperties: false },
);

export const installerBootModule = defineModule({
  name: 'installer_boot',
  summary: "Choose the installer's boot ISO: installer_iso, or one built from instance_info kernel, ramdisk and stage2",
  description:
    "installer_iso (or instance_info.installer_iso) is returned as it is. With instance_info.kernel, ramdisk and stage2 instead (both forms set is an error), builds a UEFI-bootable ISO on the controller: kernel and initrd at images/pxeboot/, an El Torito EFI entry whose FAT image holds the EFI loader (driver_info.bootloader, else the controller's GRUB from grub-mkstandalone) and EFI/BOOT/grub.cfg with inst.stage2=URL (a local stage2 is served by tsbm), inst.ks=ks_url when given, and kernel_append_params. Built once per run for each distinct input, private to the run; in check mode too (a file on the controller, nothing on the node). Returns iso (for vmedia_boot; the built one as its URL on tsbm's HTTP server, redacted), form (iso|files), kernel_args.",
  runsOn: 'controller',
  args: Args,
  checkMode: true,
  changesNode: false,
  idempotent: true,
  example: `- name: Choose the installer's boot ISO
  installer_boot: {}
  register: installer`,
  async run(ctx, a) {
    const fromTop = firstSet(undefined, ctx.vars, 'installer_iso');
    let plan: ReturnType<typeof planInstallerBoot>;
    try {
      plan = planInstallerBoot({
        iso: firstSet(a.iso, ctx.vars, 'installer_iso', 'instance_info.installer_iso'),
        isoName: a.iso !== undefined ? 'iso' : fromTop !== undefined ? 'installer_iso' : 'instance_info.installer_iso',
        kernel: firstSet(a.kernel, ctx.vars, 'instance_info.kernel'),
        ramdisk: firstSet(a.ramdisk, ctx.vars, 'instance_info.ramdisk'),
        stage2: firstSet(a.stage2, ctx.vars, 'instance_info.stage2'),
        appendParams: firstSet(a.kernel_append_params, ctx.vars, 'instance_info.kernel_append_params', 'driver_info.kernel_append_params'),
      });
    } catch (e) {
      throw e instanceof InstallerBootError ? hostError(ctx, e.message, e.hint) : e;
    }
    if (plan.kind === 'iso') return { changed: false, msg: `installer ISO ${plan.iso} (${plan.from})`, iso: plan.iso, form: 'iso', kernel_args: null };

    const bootloader = firstSet(a.bootloader, ctx.vars, 'driver_info.bootloader') as string | undefined;
    const ksUrl = firstSet(a.ks_url, ctx.vars, 'instance_info.ks_url') as string | undefined;
    try {
      const server = await runFileServer(ctx.services, ctx.vars);
      let stage2Url = plan.stage2;
      if (!isRemoteStage2(plan.stage2)) {
        const file = isAbsolute(plan.stage2) ? plan.stage2 : resolve(ctx.services.playbookDir, plan.stage2);
        assertAllowedPath(ctx, 'instance_info.stage2', file);
        stage2Url = ctx.secret(
          await server.publish(file).catch((e: unknown) => {
            throw new InstallerBootError(`instance_info.stage2 ${plan.stage2} cannot be served: ${(e as Error).message}`, 'give the install tree as a URL the nodes reach, or the path of images/install.img on the controller');
          }),
        );
      }
      const r = await installerBootIso(ctx, { kernel: plan.kernel, ramdisk: plan.ramdisk, stage2Url, ksUrl, appendParams: plan.appendParams, bootloader, tlsVerify: a.tls_verify !== false });
      const how = bootloader ? `the bootloader of ${bootloader}` : "the controller's GRUB";
      // Served as the other media are, with a token of its own; whoever has the URL can read
      // the command line (a served stage2's token, ks_url), so it is kept out of output too.
      const url = ctx.secret(await server.publish(r.file));
      return {
        // A file of the run's own scratch directory: nothing outside the controller changed.
        changed: false,
        msg: `${r.built ? 'built' : 'reusing'} the installer boot ISO from ${plan.kernel} and ${plan.ramdisk} with ${how}; inst.stage2=${stage2Url}`,
        iso: url,
        form: 'files',
        kernel_args: r.args,
      };
    } catch (e) {
      throw e instanceof InstallerBootError ? hostError(ctx, e.message, e.hint) : e;
    }
  },
});
