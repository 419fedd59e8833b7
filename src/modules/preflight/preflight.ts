// The deploy preflight: what the controller can check about one node before anything touches
// it. The BMC answers with these credentials and this trust; the image_source has the form the
// playbook installs; the image resolves (registry manifest with the node's pull secret, or an
// image URL that answers, with a checksum); the ISO is reachable. Every problem is collected
// (not only the first), each with what to do. The checks only read.
import type { Problem } from '../../module-api/preflight-problem.js';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { TsbmError } from '../../errors.js';
import type { CheckClient } from '../../http/check-client.js';
import { type ManifestAnswer, resolveManifest } from '../../http/oci-manifest.js';
import { lastingUrlOf } from '../../http/lasting-url.js';
import { probeUrl, type ProbeResult } from '../../http/url-probe.js';
import { inspectLocalImage } from '../../images/inspect/local-file.js';
import { allowedPaths, NOT_ALLOWED_FIX, pathNotAllowed } from '../../module-api/allowed-paths.js';
import { qemuImgMissing } from '../../images/raw-convert.js';
import { DEFAULT_LIMITS } from '../../util/limits.js';
import { coordinatesOf, type ImageRef, ImageRefError, parseImageSource } from '../../module-api/image-ref.js';
import { type SizeFor, sizesFromManifest } from '../bootc/image-size-known.js';
import { KsSourceError, planKickstartSource } from '../anaconda/kickstart-source.js';
import { displayUrl, ImagePlanError, planImage, urlSecrets } from '../../module-api/image-source.js';
import { buildAuthFile, loginFor, PullSecretError } from '../../module-api/pull-secret.js';
import { parseRegistryEndpoints, RegistryEndpointsError } from '../bootc/registry-endpoints.js';
import { EndpointMapError, parseEndpointMap } from '../../module-api/endpoint-map.js';

import type { PreflightKind } from '../../module-api/arg-names.js';
import { controllerGrub, GRUB_MISSING_HINT } from '../anaconda/efi-loader.js';
import { isRemoteStage2 } from '../anaconda/installer-boot.js';

interface InstallerFiles {
  kernel: string;
  ramdisk: string;
  stage2: string;
  /** driver_info.bootloader; unset, the controller's GRUB. */
  bootloader?: string | undefined;
}

export interface PreflightPlan {
  kind: PreflightKind;
  /** instance_info.image_source (or the image argument). */
  image: unknown;
  /** The ISO the BMC boots: ramdisk_iso, or the instance ISO for ramdisk deploys. */
  iso: unknown;
  /** The variable the ISO came from, for messages. */
  isoName: string;
  /**
   * ramdisk: the node boots the ISO after the run too, so it must come from a URL that outlives
   * the run (never the run's own file server); `servedFrom` is instance_iso_url.
   */
  isoOutlivesRun?: { servedFrom?: string };
  pullSecret: unknown;
  /** image_tls_verify: false marks the image's registry (or image server) insecure, as podman_pull does. */
  tlsVerify: boolean;
  /** More registries podman treats as insecure (podman_pull's registries[].insecure). */
  insecureRegistries: string[];
  registryEndpoints: unknown;
  /** image_url_endpoints: where the controller reaches the image server a URL names. */
  imageUrlEndpoints?: unknown;
  hash: { algo: unknown; value: unknown; format: unknown; allowMd5: boolean };
  /**
   * anaconda: the installer served as files (instance_info kernel, ramdisk, stage2) instead of
   * an ISO; or why the node's installer settings cannot be used (both forms, part of one).
   */
  installer?: { files: InstallerFiles } | { problem: Problem };
  /** image: a non-raw image will be converted to raw on the controller (local download, force_raw_images). */
  convertOnController?: boolean;
  skip: ReadonlySet<string>;
  /** Where relative local paths resolve (the playbook's directory). */
  baseDir: string;
  timeoutMs: number;
  /** tsbm_max_image_virtual: a local disk image's header may declare no more. */
  maxImageVirtualBytes?: number;
  /**
   * Directories controller files named by inventory data may be in (file:// images, kernel,
   * ramdisk, stage2, bootloader); default: the documented ones (src/module-api/allowed-paths.ts).
   */
  allowedPaths?: readonly string[];
}

export interface PreflightServices {
  /** Logs in to the node's BMC and finds its System and virtual CD; throws what went wrong. */
  bmc(): Promise<string>;
  /** anaconda: renders and checks the node's kickstart; a phrase when it is usable, else its problems. */
  kickstart?(): Promise<string | Problem[]>;
  http: CheckClient;
  /** Runs `check` once per key for the whole run (a fleet shares one image and one ISO). */
  once<T>(key: string, check: () => Promise<T>): Promise<T>;
  /**
   * With image_download_source: local: starts (once per run) the image mirror the nodes
   * will pull this image through; says where it listens, or throws what is wrong.
   */
  mirror?(img: ImageRef): Promise<string>;
  /** Keeps what the registry said about an image (its manifest) for the pull's memory check. */
  imageSize?(ref: string, sizes: SizeFor): void;
  secret(value: string): void;
  signal: AbortSignal;
}

export interface PreflightReport {
  problems: Problem[];
  /** One phrase per check that passed, for the ok message. */
  passed: string[];
}

interface Outcome {
  problems: Problem[];
  passed?: string;
}

const ok = (passed: string): Outcome => ({ problems: [], passed });
const bad = (check: string, message: string, fix: string): Outcome => ({ problems: [{ check, message, fix }] });
const skipped: Outcome = { problems: [] };

async function checkBmc(s: PreflightServices): Promise<Outcome> {
  try {
    return ok(await s.bmc());
  } catch (e) {
    if (!(e instanceof TsbmError)) throw e;
    return bad('bmc', e.message, e.hint ?? 'check driver_info: redfish_address, redfish_username, redfish_password, redfish_verify_ca');
  }
}

/** A controller file inventory data names, outside the allowed directories: refused, whatever preflight_skip says. */
function notAllowed(p: PreflightPlan, check: string, label: string, file: string): Outcome | undefined {
  const abs = isAbsolute(file) ? file : resolve(p.baseDir, file);
  const problem = pathNotAllowed(abs, p.allowedPaths ?? allowedPaths({}, p.baseDir));
  return problem ? bad(check, `${label}: ${problem}`, NOT_ALLOWED_FIX) : undefined;
}

/** A controller file (ISO or file:// image): there, a regular file, readable. */
async function checkLocalFile(check: string, label: string, file: string, baseDir: string): Promise<Outcome> {
  const abs = isAbsolute(file) ? file : resolve(baseDir, file);
  const st = await stat(abs).catch(() => undefined);
  if (!st) return bad(check, `${label} ${file}: no such file on the controller (looked at ${abs})`, `fix the path, or give an http(s) URL`);
  if (!st.isFile()) return bad(check, `${label} ${file} is not a regular file (${abs})`, 'point it at the file itself');
  const readable = await access(abs, constants.R_OK).then(
    () => true,
    () => false,
  );
  if (!readable) return bad(check, `${label} ${abs} is not readable by this controller user`, 'fix its permissions');
  if (st.size === 0) return bad(check, `${label} ${abs} is empty`, 'give the real file');
  return ok(`${label} ${abs} (${st.size} bytes)`);
}

function probeProblem(check: string, label: string, url: string, r: Exclude<ProbeResult, { ok: true }>, skipName: string): Outcome {
  const shown = displayUrl(url);
  switch (r.why) {
    case 'not_found':
      return bad(check, `${label} ${shown}: ${r.message}`, 'check the URL, or publish the file there');
    case 'denied':
      return bad(check, `${label} ${shown}: ${r.message}`, 'the server refuses this URL: check its credentials or signature');
    case 'tls':
      return bad(check, `${label} ${shown}: the server's ${r.message}`, "install its CA in the controller's trust store (SSL_CERT_FILE), or set image_tls_verify: false for a lab server");
    case 'unreachable':
    case 'timeout':
      return bad(
        check,
        `${label} ${shown} does not answer from the controller (${r.message})`,
        check === 'image_url'
          ? 'check the URL and the network; if the controller reaches that server at another address, map it with image_url_endpoints (e.g. {"10.0.2.2:8080": "http://127.0.0.1:8080"}); if only the nodes can reach it, add image_url to preflight_skip'
          : `check the URL and the network; if only the nodes can reach it, add ${skipName} to preflight_skip`,
      );
    default:
      return bad(check, `${label} ${shown}: ${r.message}`, 'check the URL and its server');
  }
}

/** One file the controller or the BMC needs: a local file there, or a URL that answers. */
async function checkPart(p: PreflightPlan, s: PreflightServices, check: string, label: string, where: string, tlsVerify: boolean): Promise<Outcome> {
  if (!/^https?:\/\//i.test(where)) return notAllowed(p, check, label, where) ?? checkLocalFile(check, label, where, p.baseDir);
  for (const v of urlSecrets(where)) s.secret(v);
  const r = await s.once(`${check}:${tlsVerify}:${where}`, () => probeUrl(s.http, where, { tlsVerify, timeoutMs: p.timeoutMs, signal: s.signal }));
  if (!r.ok) return probeProblem(check, label, where, r, check);
  if (r.size === 0) return bad(check, `${label} ${displayUrl(where)} is empty`, 'publish the real file there');
  return ok(`${label} answers${r.size ? ` (${r.size} bytes)` : ''}`);
}

/** The installer as files: kernel, ramdisk, a local stage2, and the EFI loader tsbm boots them with. */
async function checkInstallerFiles(p: PreflightPlan, s: PreflightServices, f: InstallerFiles): Promise<Outcome> {
  const parts: Promise<Outcome>[] = [];
  if (!p.skip.has('iso')) {
    // The controller downloads these itself to build the boot ISO.
    parts.push(checkPart(p, s, 'iso', 'instance_info.kernel', f.kernel, p.tlsVerify), checkPart(p, s, 'iso', 'instance_info.ramdisk', f.ramdisk, p.tlsVerify));
    if (!isRemoteStage2(f.stage2)) parts.push(Promise.resolve(notAllowed(p, 'iso', 'instance_info.stage2', f.stage2) ?? checkLocalFile('iso', 'instance_info.stage2', f.stage2, p.baseDir)));
    if (f.bootloader) parts.push(checkPart(p, s, 'iso', 'driver_info.bootloader', f.bootloader, p.tlsVerify));
  }
  if (!f.bootloader) {
    const grub = controllerGrub();
    parts.push(Promise.resolve('missing' in grub ? bad('bootloader', grub.missing, GRUB_MISSING_HINT) : ok(`GRUB ${grub.tool} on the controller`)));
  }
  const outcomes = await Promise.all(parts);
  const problems = outcomes.flatMap((o) => o.problems);
  return problems.length ? { problems } : ok(outcomes.flatMap((o) => (o.passed ? [o.passed] : [])).join('; '));
}

async function checkIso(p: PreflightPlan, s: PreflightServices): Promise<Outcome> {
  if (p.installer && 'problem' in p.installer) return { problems: [p.installer.problem] };
  if (p.installer) return checkInstallerFiles(p, s, p.installer.files);
  const iso = p.iso;
  // A local ISO for a boot that outlives the run is refused (or mapped to its lasting server)
  // whatever preflight_skip says: it is what the node would be told to boot, not a probe.
  if (p.isoOutlivesRun && typeof iso === 'string' && iso.trim() !== '') return checkLastingIso(p, s, iso, p.isoOutlivesRun.servedFrom);
  if (p.skip.has('iso')) return skipped;
  if (typeof iso !== 'string' || iso.trim() === '') {
    const fix =
      p.kind === 'ramdisk'
        ? 'set instance_iso or instance_info.boot_iso to the ISO to boot (an http(s) URL or a local path)'
        : p.kind === 'anaconda'
          ? 'set installer_iso or instance_info.installer_iso to the installer ISO (a boot.iso or DVD of the distribution: an http(s) URL the BMCs reach, or a local path tsbm serves)'
          : 'set ramdisk_iso to the ramdisk ISO (an http(s) URL the BMCs reach, or a local path tsbm serves)';
    return bad('iso', `no ${p.isoName} for this node`, fix);
  }
  if (!/^https?:\/\//i.test(iso)) return checkLocalFile('iso', p.isoName, iso, p.baseDir);
  for (const v of urlSecrets(iso)) s.secret(v);
  // The BMC fetches the ISO and judges its certificate; the controller only asks whether it is there.
  const r = await s.once(`iso:${iso}`, () => probeUrl(s.http, iso, { tlsVerify: false, timeoutMs: p.timeoutMs, signal: s.signal }));
  if (!r.ok) return probeProblem('iso', p.isoName, iso, r, 'iso');
  if (r.size === 0) return bad('iso', `${p.isoName} ${displayUrl(iso)} is empty`, 'publish the real ISO there');
  return ok(`${p.isoName} answers${r.size ? ` (${r.size} bytes)` : ''}`);
}

/** The ISO a persistent boot fetches: a URL of its own, or a local file a lasting server serves (the same size). */
async function checkLastingIso(p: PreflightPlan, s: PreflightServices, iso: string, servedFrom: string | undefined): Promise<Outcome> {
  const lasting = lastingUrlOf(iso, servedFrom, p.isoName);
  if ('problem' in lasting) return bad('iso', lasting.problem, lasting.fix);
  const local = /^https?:\/\//i.test(iso) ? undefined : await checkLocalFile('iso', p.isoName, iso, p.baseDir);
  if (local?.problems.length) return local;
  if (p.skip.has('iso')) return ok(`${p.isoName} from ${displayUrl(lasting.url)} (not checked)`);
  const url = lasting.url;
  for (const v of urlSecrets(url)) s.secret(v);
  const r = await s.once(`iso:${url}`, () => probeUrl(s.http, url, { tlsVerify: false, timeoutMs: p.timeoutMs, signal: s.signal }));
  const label = local ? `instance_iso_url (for ${p.isoName} ${iso})` : p.isoName;
  if (!r.ok) return probeProblem('iso', label, url, r, 'iso');
  if (r.size === 0) return bad('iso', `${label} ${displayUrl(url)} is empty`, 'publish the real ISO there');
  if (local) {
    const size = (await stat(isAbsolute(iso) ? iso : resolve(p.baseDir, iso))).size;
    if (r.size !== undefined && r.size !== size) {
      return bad('iso', `${label} ${displayUrl(url)} serves ${r.size} bytes, the local file has ${size}: another file, or an older copy`, `publish ${iso} there as it is now`);
    }
    return ok(`${p.isoName} ${iso} served at ${displayUrl(url)}${r.size !== undefined ? ` (${r.size} bytes, as the local file)` : ''}`);
  }
  return ok(`${p.isoName} answers${r.size ? ` (${r.size} bytes)` : ''}`);
}

function manifestProblem(ref: string, registry: string, repository: string, withLogin: boolean, a: Exclude<ManifestAnswer, { ok: true }>): Outcome {
  switch (a.why) {
    case 'manifest_unknown':
      return bad('registry', `image ${ref}: registry ${registry} has no such tag or digest (${a.message})`, 'check the tag in instance_info.image_source, or push the image');
    case 'name_unknown':
      return bad('registry', `image ${ref}: registry ${registry} has no repository ${repository} (${a.message})`, 'check the repository path in instance_info.image_source (a typo?)');
    case 'unauthorized':
      return withLogin
        ? bad('registry', `registry ${registry} refused the pull secret for ${repository} (${a.message})`, 'check instance_info.image_pull_secret (user, password or token)')
        : bad('registry', `registry ${registry} refused an anonymous pull of ${repository}: it needs credentials, or the repository does not exist (${a.message})`, 'set instance_info.image_pull_secret, and check the repository path');
    case 'denied':
      return bad('registry', `the pull secret has no access to ${repository} on ${registry} (${a.message})`, 'grant that account pull access, or use another pull secret');
    case 'tls':
      return bad('registry', `registry ${registry}: its ${a.message}`, "install its CA in the controller's trust store (SSL_CERT_FILE), or set image_tls_verify: false for a lab registry");
    case 'plain_http':
      return bad('registry', `registry ${registry} does not speak HTTPS (${a.message})`, 'for a plain-HTTP registry set image_tls_verify: false (podman then treats it as insecure too)');
    case 'unreachable':
    case 'timeout':
      return bad(
        'registry',
        `registry ${registry} does not answer from the controller (${a.message})`,
        'check the registry name and the network; map it with registry_endpoints when the controller reaches it at another address, or add registry to preflight_skip',
      );
    default:
      return bad('registry', `registry ${registry} answered ${a.message} for ${ref}`, 'check the registry');
  }
}

async function checkBootcImage(p: PreflightPlan, s: PreflightServices): Promise<Outcome> {
  if (typeof p.image !== 'string' || p.image.trim() === '') {
    return bad('image', 'no instance_info.image_source for this node', 'set instance_info.image_source to oci://registry/path:tag');
  }
  let img: ReturnType<typeof parseImageSource>;
  try {
    img = parseImageSource(p.image);
  } catch (e) {
    if (!(e instanceof ImageRefError)) throw e;
    const disk = /^(https?|file):\/\//i.test(p.image.trim());
    return bad(
      'image',
      disk ? `image_source ${displayUrl(p.image.trim())} is a disk image URL; deploy-bootc.yml installs container images` : e.message,
      disk ? 'run playbooks/deploy-image.yml for disk images, or give oci://registry/path:tag' : 'use oci://registry/path:tag',
    );
  }
  if (p.skip.has('registry')) return ok(`image ${img.ref} (registry not checked)`);
  const where = coordinatesOf(img);
  let login: ReturnType<typeof loginFor>;
  if (p.pullSecret !== undefined && p.pullSecret !== null && p.pullSecret !== '') {
    const raw = typeof p.pullSecret === 'string' ? p.pullSecret : JSON.stringify(p.pullSecret);
    s.secret(raw);
    try {
      login = loginFor(buildAuthFile(raw, img.registry).json, img.registry, where.repository);
    } catch (e) {
      if (e instanceof PullSecretError) return bad('registry', e.message, 'fix instance_info.image_pull_secret');
      throw e;
    }
    for (const v of [login?.password, login?.identityToken]) if (v) s.secret(v);
  }
  let endpointFor: ReturnType<typeof parseRegistryEndpoints>;
  try {
    endpointFor = parseRegistryEndpoints(p.registryEndpoints);
  } catch (e) {
    if (e instanceof RegistryEndpointsError) return bad('registry', e.message, 'e.g. registry_endpoints: {"registry.lab:5000": "https://10.0.0.5:5000"}');
    throw e;
  }
  const insecure = !p.tlsVerify || p.insecureRegistries.includes(img.registry);
  // The key holds a hash of the credentials, never the credentials.
  const who = login ? createHash('sha256').update(JSON.stringify(login)).digest('hex') : '-';
  const key = `registry:${JSON.stringify([where, insecure, endpointFor(img.registry) ?? '', who])}`;
  const query = { ...where, credentials: login, endpointFor, insecure, timeoutMs: p.timeoutMs };
  const answer = await s.once(key, () => resolveManifest(s.http, { ...query, signal: s.signal }));
  if (!answer.ok) return manifestProblem(img.ref, img.registry, where.repository, login !== undefined, answer);
  // The pull's memory check reads the size from here, not from a probe on every ramdisk.
  s.imageSize?.(
    img.ref,
    sizesFromManifest(answer.body, async (digest, signal) => {
      const a = await resolveManifest(s.http, { ...query, reference: digest, signal });
      return a.ok ? a.body : undefined;
    }),
  );
  return ok(`image ${img.ref} resolves${answer.digest ? ` (${answer.digest.slice(0, 19)}…)` : ''}`);
}

/** Probes an image URL from the controller, at the address image_url_endpoints maps its host to. */
async function probeImageUrl(p: PreflightPlan, s: PreflightServices, url: string): Promise<ProbeResult | Outcome> {
  let endpointFor: ReturnType<typeof parseEndpointMap>;
  try {
    endpointFor = parseEndpointMap(p.imageUrlEndpoints, 'image_url_endpoints');
  } catch (e) {
    if (e instanceof EndpointMapError) return bad('image_url', e.message, 'e.g. image_url_endpoints: {"10.0.2.2:8080": "http://127.0.0.1:8080"}');
    throw e;
  }
  let via: string | undefined;
  try {
    via = endpointFor(new URL(url).host);
  } catch {
    via = undefined;
  }
  return s.once(`image:${p.tlsVerify}:${url}:${via ?? ''}`, () => probeUrl(s.http, url, { tlsVerify: p.tlsVerify, timeoutMs: p.timeoutMs, signal: s.signal, endpointFor }));
}

async function checkDiskImage(p: PreflightPlan, s: PreflightServices): Promise<Outcome> {
  let plan: ReturnType<typeof planImage>;
  try {
    plan = planImage({ source: p.image, algo: p.hash.algo, hash: p.hash.value, format: p.hash.format, allowMd5: p.hash.allowMd5 });
  } catch (e) {
    if (e instanceof ImagePlanError) return bad('image', e.message, e.hint);
    throw e;
  }
  if (plan.format !== 'raw' && plan.kind === 'http' && p.convertOnController) {
    const missing = qemuImgMissing();
    if (missing) return bad('image', missing, 'install qemu-utils on the controller, or set force_raw_images: false');
  }
  const refused = plan.kind === 'file' ? notAllowed(p, 'image_url', 'image_source', plan.location) : undefined;
  if (refused) return refused;
  if (p.skip.has('image_url')) return ok(`${plan.format} image with a ${plan.algo} checksum (URL not checked)`);
  if (plan.kind === 'file') {
    const f = await checkLocalFile('image_url', 'image', plan.location, p.baseDir);
    if (!f.passed) return f;
    // The image inspector reads the file's header now: a refused image touches no node.
    const v = await inspectLocalImage(plan.location, p.baseDir, { name: `file://${plan.location}`, declared: plan.declared, maxVirtualBytes: p.maxImageVirtualBytes ?? DEFAULT_LIMITS.imageVirtualBytes });
    if (!v.ok) return bad('image', v.message, v.hint);
    return ok(`${f.passed}, ${v.found}, ${plan.algo} checksum given`);
  }
  const url = plan.location;
  for (const v of urlSecrets(url)) s.secret(v);
  const r = await probeImageUrl(p, s, url);
  if ('problems' in r) return r;
  if (!r.ok) return probeProblem('image_url', 'image', url, r, 'image_url');
  return ok(`image ${displayUrl(url)} answers${r.size ? ` (${r.size} bytes)` : ''}, ${plan.algo} checksum given`);
}

/** anaconda: the image_source form, then what the installer will fetch (registry, URL, file). */
async function checkAnacondaImage(p: PreflightPlan, s: PreflightServices): Promise<Outcome> {
  let src: ReturnType<typeof planKickstartSource>;
  try {
    src = planKickstartSource({ source: p.image, hashAlgo: p.hash.algo, hashValue: p.hash.value });
  } catch (e) {
    if (e instanceof KsSourceError) return bad('image', e.message, e.hint);
    throw e;
  }
  if (src.kind === 'ostreecontainer') return checkBootcImage(p, s);
  if (src.file) {
    const refused = notAllowed(p, 'image_url', 'image_source', src.file);
    if (refused) return refused;
    if (p.skip.has('image_url')) return ok(`liveimg ${src.shown} (file not checked)`);
    const f = await checkLocalFile('image_url', 'image', src.file, p.baseDir);
    return f.passed ? ok(`liveimg ${f.passed}`) : f;
  }
  const label = src.kind === 'url' ? 'install tree' : 'image';
  if (p.skip.has('image_url')) return ok(`${src.kind} ${src.shown} (URL not checked)`);
  for (const v of urlSecrets(src.location)) s.secret(v);
  // A tree is known by its .treeinfo, which every Anaconda install tree has at its top.
  const url = src.kind === 'url' ? `${src.location}.treeinfo` : src.location;
  const r = await probeImageUrl(p, s, url);
  if ('problems' in r) return r;
  if (!r.ok) return probeProblem('image_url', label, url, r, 'image_url');
  return ok(`${src.kind} ${src.shown} answers${src.sha256 ? ', sha256 given' : ''}`);
}

async function checkKickstartOf(s: PreflightServices): Promise<Outcome> {
  if (!s.kickstart) return skipped;
  const r = await s.kickstart();
  return typeof r === 'string' ? ok(r) : { problems: r };
}

/** The image mirror a bootc deploy with image_download_source: local pulls through. */
async function checkMirror(p: PreflightPlan, s: PreflightServices): Promise<Outcome> {
  if (p.kind !== 'bootc' || !s.mirror || typeof p.image !== 'string') return skipped;
  let img: ImageRef;
  try {
    img = parseImageSource(p.image);
  } catch {
    return skipped; // the image check says what is wrong with it
  }
  try {
    return ok(await s.mirror(img));
  } catch (e) {
    if (!(e instanceof TsbmError)) throw e;
    return bad('mirror', e.message, e.hint ?? 'set image_download_source: http to pull without the mirror');
  }
}

export async function runPreflight(p: PreflightPlan, s: PreflightServices): Promise<PreflightReport> {
  const image =
    p.kind === 'bootc'
      ? checkBootcImage(p, s)
      : p.kind === 'image'
        ? checkDiskImage(p, s)
        : p.kind === 'anaconda'
          ? checkAnacondaImage(p, s)
          : Promise.resolve(skipped);
  const kickstart = p.kind === 'anaconda' ? checkKickstartOf(s) : Promise.resolve(skipped);
  const outcomes = await Promise.all([p.skip.has('bmc') ? Promise.resolve(skipped) : checkBmc(s), image, checkIso(p, s), kickstart, checkMirror(p, s)]);
  return {
    problems: outcomes.flatMap((o) => o.problems),
    passed: outcomes.flatMap((o) => (o.passed ? [o.passed] : [])),
  };
}
