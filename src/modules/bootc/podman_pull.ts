// podman_pull: pulls the bootc image onto the ramdisk. The pull secret travels only as a 0600
// file on tmpfs (never argv, never an event) and is deleted before this module returns, so no
// code from the image (run later privileged with --pid=host) can read it.
import { Type } from '../../schema/type-builder.js';
import type { ExecResult } from '../../connection/types.js';
import type { ManifestSize } from './image-size.js';
import { firstSet } from '../../inventory/node-data.js';
import { hostError, mustSucceed, randomName } from '../../module-api/ramdisk-exec.js';
import { TsbmError, UnreachableError } from '../../errors.js';
import { defineModule, type ModuleContext } from '../../module-api/types.js';
import { NO_PIVOT_ROOT_CONF, registriesConf } from './containers-conf.js';
import { overrideMessage, overridesOf, RAMDISK_CONF_FILE, REGISTRIES_CONF_FILE, scanDropInsStep } from './drop-in-order.js';
import { ociArch, parseManifest, quotedManifest, withDigest } from './image-size.js';
import { ImageRefError, parseImageSource, coordinatesOf } from '../../module-api/image-ref.js';
import { fmtMiB, MEMORY_MARGIN_BYTES, memAvailableBytes, neededBytes } from '../../module-api/memory.js';
import { helpHasFlag, pullHasRetryDelay } from '../../module-api/podman-version.js';
import { PullSecretError, buildAuthFile } from '../../module-api/pull-secret.js';
import { downloadSource, imageMirrorFor } from './image-mirror.js';
import { byFilledDigest } from './mirror-pull.js';
import { stepRan } from '../../connection/exec-steps.js';
import { defaultSecretDir, onlyInFreshDir, removedLeftovers, secretDirArgv } from './secret-dir.js';
import { knownImageSize } from './image-size-known.js';
import { STDIN_FILE_FAILED, withStdinFile, writeFileStep } from './remote-file-steps.js';

const args = Type.Object(
  {
    image: Type.Optional(
      Type.String({
        description: 'oci://registry/path:tag; default: instance_info.image_source',
        examples: ['oci://quay.io/fedora/fedora-bootc:41'],
      }),
    ),
    pull_secret: Type.Optional(
      Type.String({
        description:
          'Docker auth token (base64 of user:password) for the image registry, or a whole {"auths": ...} JSON; default: instance_info.image_pull_secret. Always treated as a secret.',
      }),
    ),
    registries: Type.Optional(
      Type.Array(
        Type.Object({
          prefix: Type.String({ description: 'Registry the image names, e.g. quay.io' }),
          mirrors: Type.Array(Type.String(), {
            description: 'Mirror locations tried first, e.g. mirror.lab:5000',
          }),
          insecure: Type.Optional(
            Type.Boolean({ description: 'Plain HTTP / unverified TLS for this registry and its mirrors' }),
          ),
        }),
        { description: 'Registry mirrors, written as a registries.conf.d drop-in before the pull' },
      ),
    ),
    tls_verify: Type.Optional(
      Type.Boolean({
        description: 'false for lab registries with self-signed TLS or plain HTTP',
        default: true,
      }),
    ),
    download_source: Type.Optional(
      Type.Union([Type.Literal('http'), Type.Literal('local')], {
        description:
          'http: the ramdisk pulls from the registry itself; local: from an image mirror (docker-registry) the controller runs for the run on image_mirror_address and fills from the registry once for the fleet, the registry credentials staying on the controller. Default: the image_download_source var, else http',
      }),
    ),
    memory_check: Type.Optional(
      Type.Boolean({
        description: 'Compare the image size from the registry manifest with MemAvailable before pulling',
        default: true,
      }),
    ),
    timeout: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Seconds the pull may take', default: 1800 }),
    ),
    auth_dir: Type.Optional(
      Type.String({
        description:
          'tmpfs directory for the temporary auth file, made fresh (0700) for each pull; leftover auth files there are removed first. Default /run/tsbm/<inventory name>',
      }),
    ),
    containers_conf_dir: Type.Optional(
      Type.String({
        default: '/etc/containers/containers.conf.d',
        description: 'Where the no_pivot_root drop-in goes (zz-tsbm-ramdisk.conf: podman reads it after the ramdisk\'s own; one that still sorts later and sets no_pivot_root is warned about by name)',
      }),
    ),
    registries_conf_dir: Type.Optional(
      Type.String({
        default: '/etc/containers/registries.conf.d',
        description: 'Where the mirrors / insecure-registry drop-in goes (zz-tsbm-registries.conf: podman reads it after the ramdisk\'s own; one that still sorts later and names the same registry is warned about by name, and named in a failed pull\'s hint)',
      }),
    ),
    meminfo_path: Type.Optional(
      Type.String({
        description: 'Where MemAvailable is read (simulated ramdisks override it)',
        default: '/proc/meminfo',
      }),
    ),
  },
  { additionalProperties: false },
);

export const podmanPullModule = defineModule({
  name: 'podman_pull',
  summary:
    'Pull the bootc image onto the ramdisk (pull secret via a temporary 0600 auth file, memory preflight)',
  description:
    'Strips oci:// from instance_info.image_source, writes the no_pivot_root containers.conf drop-in a ramdisk needs, optional registry mirrors, checks the image size from the registry manifest against MemAvailable (the manifest deploy_preflight read on the controller in this run, else asked for on the ramdisk with skopeo or podman), pulls with --authfile (and --retry-delay=5s when the podman supports it) and deletes the auth file in all cases. Returns image_id, ref, compressed_bytes (when the size was read), duration_s.',
  runsOn: 'target',
  args,
  checkMode: true,
  idempotent: true,
  example: `- name: Pull the image
  podman_pull:
    image: "{{ instance_info.image_source }}"
    tls_verify: false
  register: pulled`,
  async run(ctx, a) {
    const source = firstSet(a.image, ctx.vars, 'instance_info.image_source');
    if (typeof source !== 'string') {
      throw hostError(
        ctx,
        'no image to pull',
        'set instance_info.image_source to oci://registry/path:tag (or the image argument)',
      );
    }
    let img: ReturnType<typeof parseImageSource>;
    try {
      img = parseImageSource(source);
    } catch (e) {
      if (e instanceof ImageRefError) throw hostError(ctx, e.message, 'use oci://registry/path:tag');
      throw e;
    }
    const rawSecret = firstSet(a.pull_secret, ctx.vars, 'instance_info.image_pull_secret');
    const viaMirror = (a.download_source ?? downloadSource(ctx.vars)) === 'local';
    // Through the mirror the ramdisk logs in to the mirror only: the registry's credentials stay
    // on the controller, which fills the mirror.
    const mirror = viaMirror && !ctx.check ? await imageMirrorFor(ctx, img, rawSecret, a.tls_verify !== false) : undefined;
    let authJson: string | undefined;
    if (mirror) {
      authJson = ctx.secret(
        JSON.stringify({ auths: { [mirror.address]: { auth: Buffer.from(`${mirror.username}:${mirror.password}`).toString('base64') } } }),
      );
    } else if (rawSecret !== undefined) {
      const secret = ctx.secret(typeof rawSecret === 'string' ? rawSecret : JSON.stringify(rawSecret));
      try {
        const af = buildAuthFile(secret, img.registry);
        authJson = ctx.secret(af.json);
        registerInnerSecrets(ctx, af.json);
      } catch (e) {
        if (e instanceof PullSecretError)
          throw hostError(ctx, e.message, 'fix instance_info.image_pull_secret');
        throw e;
      }
    }
    const tlsFlags = a.tls_verify === false ? ['--tls-verify=false'] : [];
    if (ctx.check) {
      // The mirror is neither started nor filled in check mode: the plan says where the pull would go.
      const through = viaMirror ? ` through the run's image mirror for ${img.registry} (the controller fills it once from the registry)` : authJson ? ' with a temporary auth file' : '';
      return {
        changed: true,
        msg: `would pull ${img.ref}${through}`,
        ref: img.ref,
        registry: img.registry,
      };
    }

    const confDir = a.containers_conf_dir ?? '/etc/containers/containers.conf.d';
    // Mirrors, and for tls_verify: false the image's registry marked insecure, so every podman
    // call (including ones without a --tls-verify flag) reaches a lab registry.
    const insecure = a.tls_verify === false ? [img.registry] : [];
    // The run's mirror comes first for the image's registry (one table per registry: podman
    // refuses two).
    const given = a.registries ?? [];
    const mirrors = mirror
      ? [
          ...given.filter((r) => r.prefix !== img.registry),
          {
            ...(given.find((r) => r.prefix === img.registry) ?? { prefix: img.registry }),
            mirrors: [mirror.address, ...(given.find((r) => r.prefix === img.registry)?.mirrors ?? [])],
            insecureMirrors: true,
          },
        ]
      : given;
    const regDir = mirrors.length || insecure.length ? (a.registries_conf_dir ?? '/etc/containers/registries.conf.d') : undefined;
    const secretDir = a.auth_dir ?? defaultSecretDir(ctx.host);
    const authDir = authJson ? secretDir : undefined;
    // First, in the same round trip as the directories: auth files a killed run left behind
    // go, and the auth directory is made fresh (tmpfs, 0700, checked) when this pull needs it.
    const secretStep = secretDirArgv(secretDir, authDir ? 'fresh' : 'clean');
    const mkdirs = [['mkdir', '-p', confDir], ...(regDir ? [['mkdir', '-p', regDir]] : [])];
    const memoryCheck = a.memory_check !== false;
    const meminfoPath = a.meminfo_path ?? '/proc/meminfo';
    // The podman version wait_agent read tells whether pull takes --retry-delay; without it, its --help does.
    const factsVar = ctx.vars.facts;
    const knownRetry = pullHasRetryDelay(factsVar && typeof factsVar === 'object' ? (factsVar as Record<string, unknown>).ramdisk_podman_version : undefined);
    // The image size as the controller read it in the deploy preflight: then the memory check
    // needs no manifest probe on the ramdisk (a skopeo or podman start or two).
    const sizes = memoryCheck && !mirror ? knownImageSize(ctx.services, img.ref) : undefined;
    // Without it, the ramdisk's architecture and MemAvailable ride with the first manifest
    // probe, which needs the auth file; with it (or the mirror's copy), they come here, in the
    // directories' round trip, as does whether skopeo is installed (a shell builtin: it picks
    // the first probe) and, with the podman version unknown, whether pull takes --retry-delay.
    const factsNow = mirror !== undefined || sizes !== undefined;
    const unameStep = memoryCheck || mirror ? ['uname', '-m'] : undefined;
    const meminfoStep = memoryCheck ? ['cat', meminfoPath] : undefined;
    const facts = [
      ...(memoryCheck && !mirror ? [['command', '-v', 'skopeo']] : []),
      ...(factsNow ? [unameStep, meminfoStep] : []),
      ...(knownRetry === undefined ? [['podman', 'pull', '--help']] : []),
    ].filter((step): step is string[] => step !== undefined);
    // What wait_agent read in its probe (the architecture, MemAvailable), with the size the
    // preflight read and the podman version, is all the memory check and the flags need: then
    // the directories ride in the pull's own batch too, and the pull is one round trip.
    const ramdisk = (factsVar && typeof factsVar === 'object' ? factsVar : {}) as Record<string, unknown>;
    const knownArch = typeof ramdisk.ramdisk_arch === 'string' ? ociArch(ramdisk.ramdisk_arch) : '';
    const knownAvail = typeof ramdisk.ramdisk_mem_available_bytes === 'string' ? Number(ramdisk.ramdisk_mem_available_bytes) : Number.NaN;
    let oneTrip: { known?: ManifestSize } | undefined;
    if (!mirror && knownRetry !== undefined && meminfoPath === '/proc/meminfo') {
      if (!memoryCheck) oneTrip = {};
      else if (sizes && knownArch && Number.isFinite(knownAvail)) {
        const known = await sizes(knownArch, ctx.signal);
        if (known) oneTrip = { known };
      }
    }
    const made = oneTrip ? [] : await ctx.execSteps([secretStep, ...mkdirs, ...facts]);
    const fact = (argv0: string) => {
      const i = facts.findIndex((f) => f[0] === argv0);
      return i < 0 ? undefined : made[1 + mkdirs.length + i];
    };
    /** The secret directory's and the directories' results: this batch's, or the pull batch's head. */
    const checkPrepared = (results: ExecResult[]) => {
      const prepared = results[0] as ExecResult;
      for (const f of removedLeftovers(prepared.stdout)) ctx.warn(`removed ${f}, a pull secret file an earlier (killed) run left on the ramdisk`);
      if (prepared.rc !== 0 && authDir) {
        throw hostError(
          ctx,
          `cannot make a private directory for the pull secret: ${prepared.stderr.trim() || `rc ${prepared.rc}`}`,
          'point auth_dir at a directory of its own on tmpfs (default /run/tsbm/<inventory name>), or remove what is in the way',
        );
      }
      for (const [i, argv] of mkdirs.entries()) mustSucceed(ctx, argv, results[i + 1] as ExecResult);
    };
    if (!oneTrip) checkPrepared(made);
    let arch = oneTrip ? knownArch : ociArch(fact('uname')?.stdout ?? '');
    let meminfo = fact('cat');
    // MemAvailable as wait_agent read it: the memory check goes by it (no meminfo text to rebuild).
    const availBytes = oneTrip?.known ? knownAvail : undefined;
    const help = fact('podman');
    const haveSkopeo = fact('command')?.rc === 0;
    let filled: { digest: string; size: ManifestSize; blobsCopied: number; bytesCopied: number } | undefined;
    if (mirror) {
      // The controller copies the image into the mirror once for the fleet (the first node to
      // get here does; the others wait for it), so the registry sends each blob once per run.
      const c = coordinatesOf(img);
      ctx.progress({ message: `filling the image mirror with ${img.ref}` });
      filled = await mirror
        .fill(c.repository, c.reference, arch || 'amd64', ctx.signal, (done, total) =>
          ctx.progress({ message: `filling the image mirror with ${img.ref}`, current: Math.round(done / 1048576), total: Math.round(total / 1048576), unit: 'MiB' }),
        )
        .catch((e: unknown) => {
          if (ctx.signal.aborted || !(e instanceof TsbmError)) throw e;
          throw hostError(ctx, `filling the image mirror with ${img.ref} failed: ${e.message}`, e.hint ?? 'set image_download_source: http to pull without the mirror');
        });
      if (filled.blobsCopied) ctx.log(`image mirror: ${filled.blobsCopied} blobs (${fmtMiB(filled.bytesCopied)}) copied from ${img.registry}`, 1);
    }
    // The size the controller read from the registry (filling the mirror, or in the deploy
    // preflight): the memory check needs no probe, and fails before anything is written.
    let size: ManifestSize | undefined;
    if (memoryCheck && (meminfo || availBytes !== undefined)) {
      const known = filled?.size ?? oneTrip?.known ?? (await sizes?.(arch, ctx.signal));
      if (known) size = await memoryPreflight(ctx, img.ref, { probes: [], arch, meminfo, availBytes, meminfoPath, known });
    }
    // The drop-ins, and the auth file on the pull's own stdin, ride in the pull's round trip:
    // three transfers cost more round trips than the pull of a small image takes.
    // Each directory is read back in the same batch: a drop-in of the ramdisk's own that podman
    // reads after tsbm's and names what tsbm set is reported (drop-in-order.ts).
    const writeSteps = [
      writeFileStep(`${confDir}/${RAMDISK_CONF_FILE}`, NO_PIVOT_ROOT_CONF),
      ...(regDir ? [writeFileStep(`${regDir}/${REGISTRIES_CONF_FILE}`, registriesConf(mirrors, insecure))] : []),
    ];
    const scans = [
      { dir: confDir, ours: RAMDISK_CONF_FILE, words: ['no_pivot_root'] },
      ...(regDir ? [{ dir: regDir, ours: REGISTRIES_CONF_FILE, words: [...new Set([...mirrors.map((m) => m.prefix), ...insecure])] }] : []),
    ];
    const confSteps = [...writeSteps, ...scans.map((sc) => scanDropInsStep(sc.dir, sc.words))];
    /** What a ramdisk's own later drop-in overrides of the registries' settings, for the pull's error. */
    let registryOverride: string | undefined;
    const confsWritten = (results: ExecResult[], from = 0) => {
      for (const [i, step] of writeSteps.entries()) {
        mustSucceed(ctx, ['write', step[step.length - 1] as string], results[from + i] as ExecResult, 'check that /etc/containers on the ramdisk is writable');
      }
      for (const [j, sc] of scans.entries()) {
        const listing = results[from + writeSteps.length + j];
        if (listing?.rc !== 0) continue;
        for (const o of overridesOf(listing.stdout, sc.ours)) {
          const line = overrideMessage(sc.dir, sc.ours, o);
          if (sc.ours === REGISTRIES_CONF_FILE) registryOverride ??= line;
          ctx.warn(line);
        }
      }
    };
    // Without a size read on the controller the ramdisk asks the registry before pulling, and
    // its probes need the drop-ins (an insecure lab registry) and the auth file first.
    const probeFirst = memoryCheck && !size;

    let authFile: string | undefined;
    let authRemoved = false;
    const start = Date.now();
    let pull: ExecResult;
    try {
      if (authDir && authJson) authFile = `${authDir}/auth-${randomName()}.json`;
      const authFlags = authFile ? ['--authfile', authFile] : [];
      if (probeFirst) {
        if (authFile && authJson) await ctx.put(authJson, authFile, { mode: 0o600 });
        // The controller did not read the manifest (or could not tell this architecture's
        // size): the ramdisk asks the registry, with the auth file, before pulling; the first
        // probe rides with the drop-ins and the ramdisk's facts when they are still to read.
        const probes = manifestProbes(authFile, a.tls_verify !== false, haveSkopeo);
        let firstProbe: ExecResult | undefined;
        if (!meminfo) {
          const got = await ctx.execSteps([...confSteps, ['uname', '-m'], ['cat', meminfoPath], (probes[0] as ManifestProbe).argv(img.ref)]);
          confsWritten(got);
          const [uname, mi, probed] = got.slice(confSteps.length) as ExecResult[];
          arch = ociArch(uname?.stdout ?? '');
          meminfo = mi;
          firstProbe = probed;
        } else {
          confsWritten(await ctx.execSteps(confSteps));
        }
        if (meminfo) size = await memoryPreflight(ctx, img.ref, { probes, arch, meminfo, meminfoPath, firstProbe });
      }
      const retryFlags = (knownRetry ?? (help !== undefined && helpHasFlag(`${help.stdout}\n${help.stderr}`, '--retry-delay')))
        ? ['--retry-delay=5s']
        : [];
      ctx.progress({ message: `pulling ${img.ref}` });
      const timeoutS = a.timeout ?? 1800;
      // The pull and the auth file's removal in one round trip (with the drop-ins and the auth
      // file itself when no probe needed them first). Its output's last line is the image ID:
      // no `podman image inspect` after it (bootc_install inspects the image anyway).
      // Through the mirror, the digest the controller filled is pulled (a tag there could be
      // changed by anyone holding the mirror's login, were it writable), then named as the tag.
      const viaDigest = filled ? byFilledDigest(img, filled.digest) : undefined;
      const pullArgv = ['podman', 'pull', ...authFlags, ...retryFlags, ...tlsFlags, viaDigest?.pull ?? img.ref];
      const authOnStdin = !probeFirst && authFile !== undefined && authJson !== undefined;
      const head = oneTrip ? [secretStep, ...mkdirs] : [];
      const before = probeFirst ? [] : [...head, ...confSteps];
      const rmArgv = authFile ? ['rm', '-f', authFile] : undefined;
      // In one trip the secret directory is made in the same batch: the auth file is written
      // only into the fresh, empty, private directory that step leaves (else nothing runs).
      const writeAndPull = authOnStdin && authFile ? withStdinFile(authFile, pullArgv) : pullArgv;
      const pullStep = oneTrip && authOnStdin && authDir ? onlyInFreshDir(authDir, writeAndPull) : writeAndPull;
      const steps = [...before, pullStep, ...(rmArgv ? [rmArgv] : []), ...(viaDigest?.tag ? [viaDigest.tag] : [])];
      const results = await ctx
        .execSteps(steps, {
          timeout: timeoutS * 1000,
          signal: ctx.signal,
          ...(authOnStdin ? { stdin: authJson, stdinStep: before.length } : {}),
        })
        .catch((e: unknown) => {
          // A lost connection is not a timeout: it keeps its own message (and unreachable status).
          if (ctx.signal.aborted || e instanceof UnreachableError) throw e;
          throw hostError(
            ctx,
            `podman pull ${img.ref} did not finish within ${timeoutS}s and was killed`,
            'raise timeout for big images or slow registries; check the ramdisk network',
            e,
          );
        });
      pull = results[before.length] as ExecResult;
      const tagged = viaDigest?.tag ? (results[results.length - 1] as ExecResult) : undefined;
      if (pull.rc === 0 && tagged) mustSucceed(ctx, viaDigest!.tag!, tagged, 'podman could not name the pulled image by its tag: check the ramdisk podman');
      if (authFile) {
        const rm = results[before.length + 1] as ExecResult;
        // Not run at all (the batch ended early): the finally block tries again.
        authRemoved = stepRan(rm);
        if (authRemoved) warnIfNotRemoved(ctx, authFile, rm);
      }
      if (oneTrip) checkPrepared(results);
      if (!probeFirst) confsWritten(results, head.length);
      if (authOnStdin && pull.rc === STDIN_FILE_FAILED && /^cannot write /m.test(pull.stderr)) {
        throw hostError(
          ctx,
          `cannot write the pull secret to ${authFile} on the ramdisk: ${pull.stderr.trim()}`,
          'point auth_dir at a writable tmpfs directory of its own (default /run/tsbm/<inventory name>)',
        );
      }
    } finally {
      if (authFile && !authRemoved) {
        const rm = await ctx
          .exec(['rm', '-f', authFile])
          .catch((e: unknown) => ({ rc: -1, stdout: '', stderr: String(e) }));
        warnIfNotRemoved(ctx, authFile, rm);
      }
    }
    const durationS = Math.round((Date.now() - start) / 100) / 10;
    if (pull.rc !== 0) {
      const out = `${pull.stderr}\n${pull.stdout}`;
      if (/no space left on device/i.test(out)) {
        throw hostError(
          ctx,
          `the ramdisk ran out of space pulling ${img.ref}: ${lastLine(out)}`,
          "images are unpacked into the ramdisk's RAM (tmpfs): give the node more memory or use a smaller image",
        );
      }
      if (/unauthorized|authentication required|\b40[13]\b|denied/i.test(out)) {
        throw hostError(
          ctx,
          `registry ${img.registry} refused the pull of ${img.ref}: ${lastLine(out)}`,
          registryOverride ??
            (authJson
              ? 'the pull secret was rejected: check instance_info.image_pull_secret'
              : 'the registry needs credentials: set instance_info.image_pull_secret'),
        );
      }
      throw hostError(
        ctx,
        `podman pull ${img.ref} failed (rc ${pull.rc}): ${lastLine(out)}`,
        registryOverride ?? 'check the image reference, the registry and the ramdisk network',
      );
    }
    // podman prints the image's ID (64 hex digits) as the last line of its standard output.
    const imageId = (pull.stdout.trim().split('\n').pop() ?? '').trim().replace(/^sha256:/, '');
    return {
      changed: true,
      msg: `pulled ${img.ref}${size ? ` (${fmtMiB(size.compressed)} compressed)` : ''} in ${durationS}s`,
      ref: img.ref,
      registry: img.registry,
      image_id: imageId,
      ...(size ? { compressed_bytes: size.compressed } : {}),
      duration_s: durationS,
    };
  },
});

function warnIfNotRemoved(ctx: ModuleContext, authFile: string, rm: ExecResult): void {
  if (rm.rc !== 0)
    ctx.warn(`could not delete the temporary auth file ${authFile} on the ramdisk: ${rm.stderr.trim()}`);
}

/**
 * podman's last two lines of output, its error said once: it often logs the error in a retry
 * warning first (`level=warning msg="Failed, retrying in 5s ... Error: X"`, then `Error: X`).
 */
export function lastLine(s: string): string {
  const [before, last] = s.trim().split('\n').map((l) => l.trim()).filter(Boolean).slice(-2);
  if (before === undefined || last === undefined) return before ?? '';
  return before.includes(last.replace(/^Error: /, '')) ? last : `${before} | ${last}`;
}

/** Register each credential inside an auths JSON so it is masked even if echoed decoded. */
function registerInnerSecrets(ctx: ModuleContext, json: string): void {
  const doc = JSON.parse(json) as {
    auths?: Record<string, { auth?: string; password?: string; identitytoken?: string }>;
  };
  for (const entry of Object.values(doc.auths ?? {})) {
    for (const v of [entry.auth, entry.password, entry.identitytoken]) if (v) ctx.secret(v);
    if (entry.auth) {
      const pw = Buffer.from(entry.auth, 'base64').toString('utf8').split(':').slice(1).join(':');
      if (pw) ctx.secret(pw);
    }
  }
}

/** How to ask one tool for the registry manifest of a reference. */
interface ManifestProbe {
  argv: (ref: string) => string[];
  env?: Record<string, string>;
}

function manifestProbes(authFile: string | undefined, tlsVerify: boolean, skopeo: boolean): ManifestProbe[] {
  const flags = [...(authFile ? ['--authfile', authFile] : []), ...(tlsVerify ? [] : ['--tls-verify=false'])];
  return [
    ...(skopeo ? [{ argv: (r: string) => ['skopeo', 'inspect', '--raw', ...flags, `docker://${r}`] }] : []),
    { argv: (r) => ['podman', 'manifest', 'inspect', ...flags, r] },
    {
      argv: (r) => ['podman', 'manifest', 'inspect', r],
      ...(authFile ? { env: { REGISTRY_AUTH_FILE: authFile } } : {}),
    },
  ];
}

/** What the memory check works from: the ramdisk's facts, and the size or how to probe for it. */
interface Gathered {
  /** The manifest probes to try on the ramdisk, in order, when the size is not known. */
  probes: ManifestProbe[];
  arch: string;
  /** The ramdisk's /proc/meminfo as read in this task, or */
  meminfo?: ExecResult | undefined;
  /** MemAvailable as wait_agent read it in its probe. */
  availBytes?: number | undefined;
  meminfoPath: string;
  /** The first probe's answer, when it rode with the facts. */
  firstProbe?: ExecResult | undefined;
  /** The size the controller read from the registry (preflight, or the image mirror's copy): no probe. */
  known?: ManifestSize;
}

async function manifestSize(ctx: ModuleContext, ref: string, g: Gathered): Promise<{ size?: ManifestSize; why: string }> {
  const arch = g.arch;
  const reasons: string[] = [];
  for (const [i, probe] of g.probes.entries()) {
    let r = ref;
    for (let depth = 0; depth < 2; depth++) {
      const argv = probe.argv(r);
      const res =
        i === 0 && depth === 0 && g.firstProbe
          ? g.firstProbe
          : await ctx
              .exec(argv, probe.env ? { env: probe.env } : {})
              .catch((e: unknown): ExecResult => ({ rc: 127, stdout: '', stderr: (e as Error).message }));
      const text = res.rc === 0 ? res.stdout : (quotedManifest(res.stderr) ?? '');
      const m = text ? parseManifest(text, arch) : ({ kind: 'unknown' } as const);
      if (m.kind === 'image') return { size: m.size, why: argv.slice(0, 3).join(' ') };
      if (m.kind === 'index' && m.digest) {
        r = withDigest(ref, m.digest);
        continue;
      }
      reasons.push(
        `${argv.slice(0, 3).join(' ')}: ${res.rc === 0 ? `manifest has no ${arch} image` : lastLine(res.stderr || res.stdout) || `rc ${res.rc}`}`,
      );
      break;
    }
  }
  // Two probes that failed alike (podman with --authfile, then with REGISTRY_AUTH_FILE) say it once.
  return { why: [...new Set(reasons)].join('; ') };
}

/** Ironic's "not enough memory" check; returns the image size it went by, if it could read one. */
async function memoryPreflight(ctx: ModuleContext, ref: string, g: Gathered): Promise<ManifestSize | undefined> {
  const { size, why } = g.known ? { size: g.known, why: '' } : await manifestSize(ctx, ref, g);
  if (!size) {
    ctx.warn(`could not read the size of ${ref} before pulling (${why}); memory preflight skipped`);
    return undefined;
  }
  const meminfoPath = g.meminfoPath;
  const mi = g.meminfo;
  const avail = g.availBytes ?? (mi?.rc === 0 ? memAvailableBytes(mi.stdout) : undefined);
  if (avail === undefined) {
    ctx.warn(`no MemAvailable in ${meminfoPath} on the ramdisk; memory preflight skipped`);
    return size;
  }
  const needed = neededBytes({ compressed: size.compressed }) ?? 0;
  ctx.log(
    `image ${ref}: ${fmtMiB(size.compressed)} compressed in ${size.layers} layers; needs ~${fmtMiB(needed)}, ramdisk has ${fmtMiB(avail)} available`,
    2,
  );
  if (needed > avail) {
    throw hostError(
      ctx,
      `not enough memory to pull ${ref}: needs about ${fmtMiB(needed)} (compressed layers ${fmtMiB(size.compressed)}, unpacked on the ramdisk's tmpfs, plus ${fmtMiB(MEMORY_MARGIN_BYTES)} margin) but MemAvailable is ${fmtMiB(avail)}`,
      'give the node more RAM, use a smaller image, or set memory_check: false if the ramdisk stores images on disk',
    );
  }
  return size;
}
