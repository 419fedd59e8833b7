// deploy_preflight: checks one node from the controller before a deploy touches it (BMC login,
// image reference or URL, ISO), reports every problem with what to do, and changes nothing.
// The checks live in src/modules/preflight/preflight.ts; this file reads the node's data and the run's
// shared HTTP client.
import type { ImageRef } from '../../module-api/image-ref.js';
import { Type } from '../../schema/type-builder.js';
import { firstSet, truthy } from '../../inventory/node-data.js';
import type { PreflightPlan } from './preflight.js';
import { PREFLIGHT_KINDS, type PreflightKind, SKIPPABLE_CHECKS } from '../../module-api/arg-names.js';
import { allowedPaths } from '../../module-api/allowed-paths.js';
import { limitFromVars } from '../../util/limits.js';
import { defineModule, type ModuleContext } from '../../module-api/types.js';
import { CheckClient } from '../../http/check-client.js';
import { runPreflight } from './preflight.js';
import { problemLine } from '../../module-api/preflight-problem.js';
import { downloadSource, imageMirrorFor, planImageMirror } from '../bootc/image-mirror.js';
import { checkBmcReady } from './preflight-bmc.js';
import { rememberImageSize } from '../bootc/image-size-known.js';
import { checkKickstartTemplate } from '../anaconda/anaconda-preflight.js';
import { clientFromArgs } from '../../redfish/pool.js';
import { InstallerBootError, planInstallerBoot } from '../anaconda/installer-boot.js';

const args = Type.Object(
  {
    deploy: Type.Union(
      PREFLIGHT_KINDS.map((k) => Type.Literal(k)),
      {
        description:
          'What the playbook does, which decides the checks: bootc (image_source oci://, manifest in its registry), image (http(s)/file:// disk image with a checksum), ramdisk (instance ISO), undeploy (BMC and ramdisk ISO), anaconda (installer_iso, or instance_info kernel, ramdisk and stage2 with an EFI loader: driver_info.bootloader or the controller GRUB; a second virtual media slot or ks_url, image_source as the kickstart installs it, and the kickstart rendered from ks_template and checked)',
      },
    ),
    image: Type.Optional(Type.String({ description: 'Default: instance_info.image_source' })),
    iso: Type.Optional(
      Type.String({
        description:
          'The ISO the BMC will boot: URL or local path. Default: ramdisk_iso (deploy: ramdisk takes instance_iso, then instance_info.boot_iso)',
      }),
    ),
    needs_ramdisk: Type.Optional(
      Type.Union([Type.Boolean(), Type.String()], {
        default: true,
        description: 'false when the run will not boot an ISO (undeploy without erasing): the ISO is not checked',
      }),
    ),
    pull_secret: Type.Optional(
      Type.String({ description: 'Default: instance_info.image_pull_secret (same formats as podman_pull). Always a secret.' }),
    ),
    tls_verify: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          "false marks the image's registry insecure, as podman_pull does (certificate not verified; plain HTTP when HTTPS fails), and skips certificate checks of an image URL",
      }),
    ),
    registries: Type.Optional(
      Type.Array(
        Type.Object(
          {
            prefix: Type.String(),
            mirrors: Type.Optional(Type.Array(Type.String())),
            insecure: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: true },
        ),
        { description: "podman_pull's registries list: prefixes marked insecure are treated so here too" },
      ),
    ),
    registry_endpoints: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          'Registry (host[:port] as image references name it) -> the URL the controller reaches it at, for split DNS or a lab; default: the registry_endpoints var. An http:// URL means plain HTTP.',
      }),
    ),
    image_url_endpoints: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          "Image server (host[:port] as image_source's URL names it) -> the URL the controller reaches it at, when the nodes use an address the controller cannot (a provisioning network, a VM's 10.0.2.2): the URL check goes there, naming the original host; default: the image_url_endpoints var. The nodes still fetch the URL as written.",
      }),
    ),
    hash_algo: Type.Optional(Type.String({ description: 'deploy: image; default instance_info.image_os_hash_algo' })),
    hash_value: Type.Optional(Type.String({ description: 'deploy: image; default instance_info.image_os_hash_value' })),
    disk_format: Type.Optional(Type.String({ description: 'deploy: image; default instance_info.image_disk_format' })),
    allow_md5: Type.Optional(Type.Boolean({ default: false })),
    skip: Type.Optional(
      Type.Array(
        Type.Union(SKIPPABLE_CHECKS.map((c) => Type.Literal(c))),
        {
          description:
            'Checks to leave out, e.g. [registry] when only the ramdisks reach the registry. The image_source form and checksum are always checked.',
        },
      ),
    ),
    timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, default: 30, description: 'Seconds each HTTP check may take' })),
  },
  { additionalProperties: false },
);

/** The run's HTTP client for checks, closed when the run ends. */
async function checkClient(ctx: ModuleContext): Promise<CheckClient> {
  return ctx.services.get('preflight:http', () => {
    const c = new CheckClient();
    ctx.services.onClose(() => c.close());
    return c;
  });
}

function onceCache(ctx: ModuleContext): Map<string, Promise<unknown>> {
  return ctx.services.get('preflight:once', () => new Map<string, Promise<unknown>>());
}

function isoOf(kind: PreflightKind, a: { iso?: string | undefined }, ctx: ModuleContext): { iso: unknown; name: string } {
  if (a.iso !== undefined && a.iso !== '') return { iso: a.iso, name: kind === 'ramdisk' ? 'instance_iso' : kind === 'anaconda' ? 'installer_iso' : 'ramdisk_iso' };
  if (kind === 'anaconda') {
    const inst = firstSet(undefined, ctx.vars, 'installer_iso');
    return inst !== undefined ? { iso: inst, name: 'installer_iso' } : { iso: firstSet(undefined, ctx.vars, 'instance_info.installer_iso'), name: 'instance_info.installer_iso' };
  }
  if (kind === 'ramdisk') {
    const inst = firstSet(undefined, ctx.vars, 'instance_iso');
    return inst !== undefined ? { iso: inst, name: 'instance_iso' } : { iso: firstSet(undefined, ctx.vars, 'instance_info.boot_iso'), name: 'instance_info.boot_iso' };
  }
  return { iso: firstSet(undefined, ctx.vars, 'ramdisk_iso'), name: 'ramdisk_iso' };
}

/** instance_iso_url: where a lasting web server serves a local instance_iso (a ramdisk deploy boots it after the run). */
function lastingSetting(ctx: ModuleContext): { servedFrom?: string } {
  const v = firstSet(undefined, ctx.vars, 'instance_iso_url');
  return typeof v === 'string' && v.trim() !== '' ? { servedFrom: v.trim() } : {};
}

export const deployPreflightModule = defineModule({
  name: 'deploy_preflight',
  summary: 'Check a node from the controller before a deploy touches it (BMC, image, ISO); changes nothing',
  description:
    "Logs in to the BMC (driver_info, through the run's Redfish client) and finds the System and its virtual CD; checks that image_source fits the playbook (oci:// for bootc, http(s)/file:// with a checksum for image); asks the registry for the image manifest with the node's pull secret (OCI distribution API, Bearer token or Basic auth; registry_endpoints says where the controller reaches a registry; the manifest is kept in memory for podman_pull's memory check, so the ramdisks need not ask again); checks that an image URL (at the address image_url_endpoints maps its host to) and the ISO answer (or the local file exists). Every problem is reported, each with what to do; the host fails and nothing is touched. Results shared by many nodes (one image, one ISO) are checked once per run. Returns problems and checks.",
  runsOn: 'controller',
  args,
  checkMode: true,
  changesNode: false,
  idempotent: true,
  example: `- name: Check the node before touching it
  deploy_preflight:
    deploy: bootc
    tls_verify: "{{ image_tls_verify }}"
    skip: "{{ preflight_skip }}"`,
  async run(ctx, a) {
    const kind = a.deploy;
    const { iso, name } = isoOf(kind, a, ctx);
    const needsRamdisk = a.needs_ramdisk === undefined || truthy(a.needs_ramdisk);
    const skip = new Set<string>(a.skip ?? []);
    if (!needsRamdisk) skip.add('iso');
    const plan: PreflightPlan = {
      kind,
      image: firstSet(a.image, ctx.vars, 'instance_info.image_source'),
      iso,
      isoName: name,
      ...(kind === 'ramdisk' ? { isoOutlivesRun: lastingSetting(ctx) } : {}),
      pullSecret: firstSet(a.pull_secret, ctx.vars, 'instance_info.image_pull_secret'),
      tlsVerify: a.tls_verify !== false,
      insecureRegistries: (a.registries ?? []).filter((r) => r.insecure === true).map((r) => r.prefix),
      registryEndpoints: firstSet(a.registry_endpoints, ctx.vars, 'registry_endpoints'),
      imageUrlEndpoints: firstSet(a.image_url_endpoints, ctx.vars, 'image_url_endpoints'),
      hash: {
        algo: firstSet(a.hash_algo, ctx.vars, 'instance_info.image_os_hash_algo'),
        value: firstSet(a.hash_value, ctx.vars, 'instance_info.image_os_hash_value'),
        format: firstSet(a.disk_format, ctx.vars, 'instance_info.image_disk_format'),
        allowMd5: a.allow_md5 === true || truthy(ctx.vars.allow_md5) || truthy(firstSet(undefined, ctx.vars, 'instance_info.image_allow_md5')),
      },
      convertOnController:
        firstSet(undefined, ctx.vars, 'image_download_source', 'instance_info.image_download_source') === 'local' &&
        truthy(firstSet(undefined, ctx.vars, 'force_raw_images') ?? true),
      skip,
      baseDir: ctx.services.playbookDir,
      allowedPaths: allowedPaths(ctx.vars, ctx.services.playbookDir),
      timeoutMs: (a.timeout ?? 30) * 1000,
      maxImageVirtualBytes: limitFromVars(ctx.vars, 'imageVirtualBytes'),
    };
    const anaconda = kind === 'anaconda';
    if (anaconda) {
      // Which form boots the installer: the ISO as it is (checked as before), or files tsbm
      // builds a boot ISO from; both, or part of the files form, fail here.
      try {
        const boot = planInstallerBoot({
          iso,
          isoName: name,
          kernel: firstSet(undefined, ctx.vars, 'instance_info.kernel'),
          ramdisk: firstSet(undefined, ctx.vars, 'instance_info.ramdisk'),
          stage2: firstSet(undefined, ctx.vars, 'instance_info.stage2'),
          appendParams: firstSet(undefined, ctx.vars, 'instance_info.kernel_append_params', 'driver_info.kernel_append_params'),
        });
        if (boot.kind === 'files') {
          const bootloader = firstSet(undefined, ctx.vars, 'driver_info.bootloader');
          plan.installer = { files: { kernel: boot.kernel, ramdisk: boot.ramdisk, stage2: boot.stage2, bootloader: typeof bootloader === 'string' ? bootloader : undefined } };
        }
      } catch (e) {
        if (!(e instanceof InstallerBootError)) throw e;
        plan.installer = { problem: { check: 'iso', message: e.message, fix: e.hint } };
      }
    }
    const cache = onceCache(ctx);
    const ksUrl = anaconda ? firstSet(undefined, ctx.vars, 'instance_info.ks_url') : undefined;
    const report = await runPreflight(plan, {
      bmc: () => checkBmcReady(clientFromArgs(ctx, {}), needsRamdisk, anaconda && ksUrl === undefined),
      ...(anaconda ? { kickstart: () => checkKickstartTemplate(ctx, a.tls_verify !== false, ksUrl) } : {}),
      http: await checkClient(ctx),
      once: <T>(key: string, check: () => Promise<T>) => {
        let p = cache.get(key) as Promise<T> | undefined;
        if (!p) {
          p = check();
          cache.set(key, p);
        }
        return p;
      },
      secret: (v) => {
        ctx.secret(v);
      },
      imageSize: (ref, sizes) => rememberImageSize(ctx.services, ref, sizes),
      signal: ctx.signal,
      // Started here, so a missing docker-registry or an upstream it cannot use is said before
      // any node is touched; podman_pull finds it running. Check mode only plans it.
      ...(kind === 'bootc' && downloadSource(ctx.vars) === 'local'
        ? {
            mirror: async (img: ImageRef) => {
              if (ctx.check) return planImageMirror(ctx, img, plan.pullSecret, plan.tlsVerify);
              const m = await imageMirrorFor(ctx, img, plan.pullSecret, plan.tlsVerify);
              return `image mirror for ${img.registry} on ${m.address}`;
            },
          }
        : {}),
    });
    const problems = report.problems;
    if (problems.length === 0) {
      return { changed: false, msg: `ready: ${report.passed.join('; ')}`, checks: report.passed, problems: [] };
    }
    // One line per problem: with several, each is its own warning and the failure names them.
    if (problems.length > 1) for (const p of problems) ctx.warn(problemLine(p));
    const msg =
      problems.length === 1
        ? `${problemLine(problems[0]!)}; nothing was touched`
        : `${problems.length} preflight problems (${problems.map((p) => p.check).join(', ')}), one warning line each; nothing was touched`;
    return { changed: false, failed: true, msg, problems, checks: report.passed };
  },
});
