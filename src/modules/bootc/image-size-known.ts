// The image's size as the controller read it. The deploy preflight fetches the image manifest
// from the registry with the node's pull secret; kept here, it spares podman_pull's memory
// check (Ironic's "not enough memory" before the pull) the manifest probe on the ramdisk, one or
// two skopeo/podman starts and a round trip per node. Held in the run's services, in memory
// only, per image reference; a pull that finds nothing here (a run resumed past the preflight,
// preflight_skip: [registry], a manifest without layer sizes) probes on the ramdisk as before.
import type { RunServices } from '../../module-api/types.js';
import { type ManifestSize, parseManifest } from './image-size.js';

/** The compressed size for one architecture, or undefined when the controller cannot tell. */
export type SizeFor = (arch: string, signal: AbortSignal) => Promise<ManifestSize | undefined>;

/** One platform's manifest (JSON) by digest, as the registry gives it to the controller. */
type ManifestByDigest = (digest: string, signal: AbortSignal) => Promise<string | undefined>;

const table = (services: Pick<RunServices, 'get'>) => services.get('image-size:known', () => new Map<string, SizeFor>());

/**
 * The sizes a manifest tells: an image manifest's own, or (an index) the platform manifest's,
 * fetched once per architecture for the run.
 */
export function sizesFromManifest(manifest: string, byDigest: ManifestByDigest): SizeFor {
  const perArch = new Map<string, Promise<ManifestSize | undefined>>();
  return (arch, signal) => {
    let p = perArch.get(arch);
    if (!p) {
      p = (async () => {
        const top = parseManifest(manifest, arch);
        if (top.kind === 'image') return top.size;
        if (top.kind !== 'index' || !top.digest) return undefined;
        const body = await byDigest(top.digest, signal);
        const own = body === undefined ? undefined : parseManifest(body, arch);
        return own?.kind === 'image' ? own.size : undefined;
      })().catch(() => undefined);
      perArch.set(arch, p);
    }
    return p;
  };
}

/** Keeps what the controller read about `ref` for the run (the first reading stays). */
export function rememberImageSize(services: Pick<RunServices, 'get'>, ref: string, sizes: SizeFor): void {
  const t = table(services);
  if (!t.has(ref)) t.set(ref, sizes);
}

/** What the controller read about `ref` in this run, if it did. */
export function knownImageSize(services: Pick<RunServices, 'get'>, ref: string): SizeFor | undefined {
  return table(services).get(ref);
}
