// image_write: writes a whole-disk image (raw or qcow2) to the node's root disk, verified by
// its checksum (Ironic's `direct` deploy). Raw streams straight to the disk; qcow2 goes via the
// ramdisk's tmpfs and qemu-img. With image_download_source: local the controller caches the
// image and serves it to the ramdisks itself.
import { stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { Type } from '../../schema/type-builder.js';
import { MIB } from '../../module-api/disk.js';
import type { ImagePlan } from '../../module-api/image-source.js';
import { firstSet, truthy } from '../../inventory/node-data.js';
import { hostError } from '../../module-api/ramdisk-exec.js';
import type { RawImage } from '../../images/raw-convert.js';
import { defineModule, type ModuleContext } from '../../module-api/types.js';
import { isLoopback, runFileServer } from '../../http/run-file-server.js';
import { cachedImage, cacheFile, DEFAULT_CACHE_DIR, ImageCacheError, pinCacheFile } from '../../images/cache.js';
import { convertedRaw, qemuImgMissing, recordedRaw } from '../../images/raw-convert.js';
import { limitFromVars } from '../../util/limits.js';
import { displayUrl, ImagePlanError, planImage, urlSecrets } from '../../module-api/image-source.js';
import { fmtBytes } from '../../module-api/image-progress.js';
import { devicePathProblem } from '../../module-api/device-path.js';
import { assertAllowedPath } from '../../module-api/allowed-paths.js';
import { directIoWorks, isBlockDevice, relocateGptBackupHeader, tableLabel } from './image-disk.js';
import { remoteContentLength } from './image-fetch.js';
import { writeQcow2Image } from './image-qcow2.js';
import { writeRawImage } from './image-raw.js';
import { formatOfControllerFile, formatOrRefuse, peekUrl } from './image-inspect.js';
import { ImageRefused } from '../../images/inspect/refused.js';

const args = Type.Object(
  {
    device: Type.Optional(
      Type.String({
        pattern: '^/dev/',
        description:
          'Whole-disk device, normally "{{ root.device }}"; default: a registered root_device result',
      }),
    ),
    image: Type.Optional(
      Type.String({
        description:
          'http(s):// or file:// (a controller file tsbm serves); default: instance_info.image_source',
      }),
    ),
    hash_algo: Type.Optional(
      Type.Union([Type.Literal('sha256'), Type.Literal('sha512'), Type.Literal('md5')], {
        description: 'Default: instance_info.image_os_hash_algo, else sha256',
      }),
    ),
    hash_value: Type.Optional(
      Type.String({
        description:
          'Hex checksum; default: instance_info.image_os_hash_value (required one way or the other)',
      }),
    ),
    disk_format: Type.Optional(
      Type.Union([Type.Literal('raw'), Type.Literal('qcow2')], {
        description: "Default: instance_info.image_disk_format. The image's content decides either way (its first bytes, read before anything is written): a declared format the content does not match is refused, and without one a qcow2 is converted whatever its name",
      }),
    ),
    allow_md5: Type.Optional(
      Type.Boolean({ default: false, description: 'Accept an md5 checksum (refused by default). Default: the allow_md5 var, else instance_info.image_allow_md5' }),
    ),
    download_source: Type.Optional(
      Type.Union([Type.Literal('http'), Type.Literal('local')], {
        description:
          'http: the ramdisk fetches the URL itself; local: the controller downloads it once into its cache and serves it. Default: the image_download_source var, else http',
      }),
    ),
    cache_dir: Type.Optional(
      Type.String({ description: 'Controller image cache; default: image_cache_dir var, else .tsbm/images' }),
    ),
    force_raw: Type.Optional(
      Type.Boolean({
        description:
          'With download_source local: a non-raw image is converted to raw once, in the controller cache (qemu-img, package qemu-utils), and every ramdisk streams the raw image verified by its new SHA-256 (no image in ramdisk RAM). false: each ramdisk downloads the qcow2 to its RAM and converts it. Default: the force_raw_images var, else true',
      }),
    ),
    cache_max_bytes: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'Evict least recently used cached images beyond this size; default: image_cache_max_bytes var, else no bound',
      }),
    ),
    tls_verify: Type.Optional(
      Type.Boolean({ default: true, description: 'Verify the image server certificate' }),
    ),
    timeout: Type.Optional(
      Type.Integer({ minimum: 1, default: 3600, description: 'Seconds for the whole download and write' }),
    ),
    retries: Type.Optional(
      Type.Integer({
        minimum: 0,
        default: 3,
        description:
          'Download retries after a lost connection (qcow2 and the cache resume with HTTP Range; a raw stream restarts)',
      }),
    ),
    tmp_dir: Type.Optional(
      Type.String({ default: '/tmp', description: 'Ramdisk tmpfs directory for qcow2 downloads' }),
    ),
    meminfo_path: Type.Optional(
      Type.String({ default: '/proc/meminfo', description: 'Where the ramdisk reports MemAvailable' }),
    ),
  },
  { additionalProperties: false },
);

/** A registered root_device result in the host's vars (e.g. `register: root`). */
function registeredRoot(ctx: ModuleContext): { device: string; size_mib: number } | undefined {
  for (const v of Object.values(ctx.vars)) {
    if (v && typeof v === 'object') {
      const r = v as Record<string, unknown>;
      if (typeof r.device === 'string' && typeof r.size_mib === 'number' && typeof r.reason === 'string')
        return { device: r.device, size_mib: r.size_mib };
    }
  }
  return undefined;
}

async function diskBytes(
  ctx: ModuleContext,
  device: string,
  root: { device: string; size_mib: number } | undefined,
): Promise<number | undefined> {
  const r = await ctx.exec(['blockdev', '--getsize64', device]).catch(() => undefined);
  if (r?.rc === 0 && /^\d+$/.test(r.stdout.trim())) return Number(r.stdout.trim());
  return root?.device === device ? root.size_mib * MIB : undefined;
}

/** Serves a controller file to the ramdisk; warns when a loopback address cannot reach a remote one. */
async function publishForRamdisk(ctx: ModuleContext, file: string): Promise<string> {
  const server = await runFileServer(ctx.services, ctx.vars);
  const target = firstSet(undefined, ctx.vars, 'ssh_host', 'ansible_host');
  if (isLoopback(new URL(server.url).hostname) && typeof target === 'string' && !isLoopback(target)) {
    ctx.warn(
      `serving ${file} on loopback (${server.url}); the ramdisk at ${target} cannot reach it: set tsbm_http_address to a controller address the ramdisks reach`,
    );
  }
  return server.publish(file);
}

/** The URL the ramdisk fetches: the source itself, or one tsbm's file server publishes. */
async function ramdiskUrl(
  ctx: ModuleContext,
  plan: ImagePlan,
  a: {
    download_source?: string;
    cache_dir?: string;
    cache_max_bytes?: number;
    force_raw?: boolean;
    tls_verify?: boolean;
    retries?: number;
    timeout?: number;
  },
): Promise<{ url: string; cached?: { file: string; downloaded: boolean }; raw?: RawImage; decided?: { format: 'raw' | 'qcow2' } }> {
  const shown = plan.kind === 'file' ? `file://${plan.location}` : displayUrl(plan.location);
  const source =
    a.download_source ??
    firstSet(undefined, ctx.vars, 'image_download_source', 'instance_info.image_download_source') ??
    'http';
  if (source !== 'http' && source !== 'local')
    throw hostError(
      ctx,
      `image_download_source ${JSON.stringify(source)} is neither http nor local`,
      'use http or local',
    );
  if (plan.kind === 'file') {
    const file = isAbsolute(plan.location) ? plan.location : resolve(ctx.services.playbookDir, plan.location);
    assertAllowedPath(ctx, 'image_source', file);
    if (!(await stat(file).catch(() => undefined))?.isFile())
      throw hostError(
        ctx,
        `image file ${file} does not exist on the controller`,
        'fix the file:// path in image_source',
      );
    // The controller reads the file's header before any ramdisk sees the file.
    const decided = await formatOfControllerFile(ctx, file, { name: shown, declared: plan.declared, state: 'nothing was served or written' });
    return { url: await publishForRamdisk(ctx, file), decided };
  }
  if (source === 'http') return { url: plan.location };
  const dir =
    a.cache_dir ??
    (firstSet(undefined, ctx.vars, 'image_cache_dir') as string | undefined) ??
    DEFAULT_CACHE_DIR;
  const maxRaw = a.cache_max_bytes ?? firstSet(undefined, ctx.vars, 'image_cache_max_bytes');
  const maxBytes = maxRaw === undefined ? undefined : Number(maxRaw);
  if (maxBytes !== undefined && !(Number.isFinite(maxBytes) && maxBytes >= 0))
    throw hostError(
      ctx,
      `image_cache_max_bytes ${String(maxRaw)} is not a byte count`,
      'give a whole number of bytes',
    );
  const forceRaw = a.force_raw ?? truthy(firstSet(undefined, ctx.vars, 'force_raw_images') ?? true);
  if (plan.format !== 'raw' && forceRaw) {
    // Before any download: a controller without qemu-img hears it now, not after the transfer.
    // (An image whose name hides its format is converted too, once its content is read.)
    const missing = qemuImgMissing();
    if (missing) throw hostError(ctx, missing, 'install qemu-utils on the controller, or set force_raw_images: false');
    const done = await recordedRaw(cacheFile(resolve(dir), plan.algo, plan.hash));
    if (done) {
      pinCacheFile(done.file);
      return { url: await publishForRamdisk(ctx, done.file), raw: done };
    }
  }
  try {
    const c = await cachedImage({
      url: plan.location,
      algo: plan.algo,
      hash: plan.hash,
      dir: resolve(dir),
      ...(maxBytes !== undefined ? { maxBytes } : {}),
      tlsVerify: a.tls_verify ?? true,
      retries: a.retries ?? 3,
      downloadMaxBytes: limitFromVars(ctx.vars, 'downloadBytes'),
      idleMs: limitFromVars(ctx.vars, 'downloadIdleMs'),
      timeoutMs: (a.timeout ?? 3600) * 1000,
      signal: ctx.signal,
      onLog: (m) => ctx.log(m),
      onProgress: (bytes, total) =>
        ctx.progress({
          message: `caching image on the controller: ${fmtBytes(bytes)}${total ? ` of ${fmtBytes(total)}` : ''}`,
          current: bytes,
          ...(total ? { total } : {}),
          unit: 'bytes',
        }),
    });
    // The cached file's content decides (a qcow2 named *.img is converted too), or refuses.
    const decided = await formatOfControllerFile(ctx, c.file, { name: shown, declared: plan.declared, state: 'nothing was served or written' });
    if (decided.format !== 'raw' && forceRaw) {
      const missing = qemuImgMissing();
      if (missing) throw hostError(ctx, missing, 'install qemu-utils on the controller, or set force_raw_images: false');
      // The source checksum (md5 too) was verified against the download; from here on only
      // the raw image's own SHA-256 counts.
      const raw = await convertedRaw({
        source: c.file,
        format: decided.format,
        name: shown,
        maxVirtualBytes: limitFromVars(ctx.vars, 'imageVirtualBytes'),
        timeoutMs: (a.timeout ?? 3600) * 1000,
        signal: ctx.signal,
        onLog: (m) => ctx.log(m),
        onProgress: (percent) =>
          ctx.progress({ message: `converting the image to raw on the controller`, current: Math.round(percent), total: 100, unit: '%' }),
      });
      pinCacheFile(raw.file);
      return { url: await publishForRamdisk(ctx, raw.file), cached: { file: c.file, downloaded: c.downloaded }, raw };
    }
    return {
      url: await publishForRamdisk(ctx, c.file),
      cached: { file: c.file, downloaded: c.downloaded },
      decided,
    };
  } catch (e) {
    if (e instanceof ImageRefused) throw hostError(ctx, e.message, e.hint);
    if (e instanceof ImageCacheError)
      throw hostError(
        ctx,
        `${displayUrl(plan.location)}: ${e.message}`,
        'check the URL and checksum; the controller must reach the image server',
        e,
      );
    throw e;
  }
}

export const imageWriteModule = defineModule({
  name: 'image_write',
  summary: 'Write a whole-disk image (raw or qcow2) to the root disk, verified by checksum',
  description:
    "Raw images stream from curl through tee into `dd bs=4M iflag=fullblock oflag=direct conv=notrunc,fsync` while a FIFO feeds sha256sum/sha512sum: one pass, nothing held in memory; a lost connection restarts the stream. qcow2 images are downloaded to the ramdisk tmpfs (after a MemAvailable check; curl resumes with HTTP Range), verified, then written with `qemu-img convert -n -O host_device` (raw for a file-backed disk). A wrong checksum fails the host naming both hashes and wipes the partial image's partition table. Before anything is written or converted, tsbm's image inspector reads the image's first 64 KiB (on the controller for a file:// source or the cache; from the ramdisk for a URL it fetches itself) and decides its format from the content: a declared image_disk_format it contradicts, a format other than raw and qcow2, a qcow2 naming a backing file, an external data file or a json: specification, and a virtual size over tsbm_max_image_virtual are refused, naming the image and what was found. qemu-img is always told the format (-f) and runs under CPU-time and address-space limits. With image_download_source: local and force_raw_images (the default), a qcow2 is verified against its checksum on the controller, converted to raw there once, its new SHA-256 recorded beside it, and streamed to every ramdisk like a raw image. Afterwards `sgdisk -e` moves the GPT backup header to the disk end so configdrive_write can add its partition. The URL (it may carry credentials) is never on a command line. image_download_source: local downloads the image once into the controller cache and serves it from the built-in HTTP server (tsbm_http_address).",
  runsOn: 'target',
  args,
  checkMode: true,
  example: `- name: Write the image
  image_write:
    device: "{{ root.device }}"
  register: written`,
  async run(ctx, a) {
    let plan: ImagePlan;
    try {
      plan = planImage({
        source: firstSet(a.image, ctx.vars, 'instance_info.image_source'),
        algo: firstSet(a.hash_algo, ctx.vars, 'instance_info.image_os_hash_algo'),
        hash: firstSet(a.hash_value, ctx.vars, 'instance_info.image_os_hash_value'),
        format: firstSet(a.disk_format, ctx.vars, 'instance_info.image_disk_format'),
        // The same switches as deploy_preflight's, so a node its check passed is not refused here.
        allowMd5: a.allow_md5 ?? (truthy(ctx.vars.allow_md5) || truthy(firstSet(undefined, ctx.vars, 'instance_info.image_allow_md5'))),
      });
    } catch (e) {
      if (e instanceof ImagePlanError) throw hostError(ctx, e.message, e.hint);
      throw e;
    }
    if (plan.kind === 'http') for (const s of urlSecrets(plan.location)) ctx.secret(s);
    const shownUrl = plan.kind === 'file' ? `file://${plan.location}` : displayUrl(plan.location);
    const root = registeredRoot(ctx);
    const device = a.device ?? root?.device;
    if (!device)
      throw hostError(
        ctx,
        'no target device',
        'run root_device first (register: root) and pass device: "{{ root.device }}"',
      );
    const badDevice = devicePathProblem(device);
    if (badDevice)
      throw hostError(ctx, `refusing to write: the device ${badDevice}`, 'pass the whole disk as /dev/NAME, e.g. device: "{{ root.device }}"');
    const tlsVerify = a.tls_verify ?? true;
    const facts = { device, image: shownUrl, disk_format: plan.format, hash_algo: plan.algo };
    if (ctx.check) {
      const size = await diskBytes(ctx, device, root);
      return {
        changed: true,
        msg: `would write ${plan.format} image ${shownUrl} to ${device}${size ? ` (${fmtBytes(size)})` : ''}`,
        ...facts,
      };
    }

    const start = Date.now();
    const served = await ramdiskUrl(ctx, plan, a);
    const url = served.url;
    // The image's content decides how it is written: the controller inspected what it serves;
    // a URL the ramdisk fetches itself is inspected from its first bytes, as the ramdisk gets them.
    const peeked = !served.raw && !served.decided;
    const format = served.raw
      ? 'qcow2'
      : (served.decided ?? formatOrRefuse(ctx, await peekUrl(ctx, url, shownUrl, tlsVerify), { name: shownUrl, declared: plan.declared, state: `nothing was written to ${device}` })).format;
    // A controller-converted image is written as raw, verified by the SHA-256 of the raw bytes.
    const write = served.raw
      ? { format: 'raw' as const, algo: 'sha256' as const, hash: served.raw.sha256 }
      : { format, algo: plan.algo, hash: plan.hash };
    const size = await diskBytes(ctx, device, root);
    const total = await remoteContentLength(ctx, url, tlsVerify);
    if (write.format === 'raw' && total !== undefined && size !== undefined && total > size) {
      throw hostError(
        ctx,
        `the image (${fmtBytes(total)}) is larger than ${device} (${fmtBytes(size)}); nothing was written`,
        'choose a bigger disk with root device hints',
      );
    }
    const common = {
      url,
      shownUrl,
      device,
      algo: write.algo,
      hash: write.hash,
      tlsVerify,
      total,
      timeoutMs: (a.timeout ?? 3600) * 1000,
      retries: a.retries ?? 3,
    };
    let bytes: number;
    let attempts = 1;
    if (write.format === 'raw') {
      const directIo = await directIoWorks(ctx, device);
      if (!directIo)
        ctx.log(`${device} does not accept O_DIRECT; writing through the page cache with conv=fsync`, 2);
      const r = await writeRawImage(ctx, { ...common, directIo, ...(peeked ? { recheck: true } : {}) });
      bytes = r.bytes;
      attempts = r.attempts;
    } else {
      const r = await writeQcow2Image(ctx, {
        ...common,
        blockDevice: await isBlockDevice(ctx, device),
        diskBytes: size,
        tmpDir: a.tmp_dir ?? '/tmp',
        meminfoPath: a.meminfo_path ?? '/proc/meminfo',
        declared: plan.declared,
      });
      bytes = r.bytes;
    }
    const gpt = await relocateGptBackupHeader(ctx, device);
    if (gpt.error)
      ctx.warn(`sgdisk -e ${device} failed (${gpt.error}): a config drive may not fit after the image`);
    const label = gpt.ran ? 'gpt' : await tableLabel(ctx, device);
    const durationS = Math.max(0.001, (Date.now() - start) / 1000);
    return {
      changed: true,
      msg: `wrote ${format} image ${shownUrl} (${fmtBytes(bytes)}, ${write.algo} verified) to ${device} in ${Math.round(durationS)}s${served.raw ? `, converted to raw on the controller${served.raw.converted ? '' : ' (cached)'}` : ''}${served.cached ? ` via the controller cache${served.cached.downloaded ? '' : ' (hit)'}` : ''}`,
      ...facts,
      disk_format: format,
      ...(served.raw
        ? { written_format: 'raw', written_hash_algo: 'sha256', written_sha256: served.raw.sha256, raw_converted: served.raw.converted }
        : {}),
      bytes,
      attempts,
      partition_table: label ?? null,
      gpt_backup_relocated: gpt.ran,
      duration_s: Math.round(durationS),
      rate_bytes_per_s: Math.round(bytes / durationS),
      ...(served.cached
        ? { cache_file: served.cached.file, cache_downloaded: served.cached.downloaded }
        : {}),
    };
  },
});
