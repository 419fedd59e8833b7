// Image size before pulling, from the registry manifest, with whatever tool the ramdisk has:
// `skopeo inspect --raw` first, then `podman manifest inspect`. Both give compressed layer
// sizes; a manifest list is resolved to the ramdisk's architecture.
export interface ManifestSize {
  compressed: number;
  layers: number;
}

interface Descriptor {
  size?: number;
  digest?: string;
  platform?: { architecture?: string; os?: string };
}
interface ManifestDoc {
  layers?: Descriptor[];
  config?: Descriptor;
  manifests?: Descriptor[];
}

/** uname -m to OCI architecture names. */
export function ociArch(unameM: string): string {
  const m = unameM.trim();
  return (
    (
      { x86_64: 'amd64', aarch64: 'arm64', armv7l: 'arm', ppc64le: 'ppc64le', s390x: 's390x' } as Record<
        string,
        string
      >
    )[m] ?? m
  );
}

export type ParsedManifest =
  | { kind: 'image'; size: ManifestSize }
  | { kind: 'index'; digest?: string }
  | { kind: 'unknown' };

export function parseManifest(json: string, arch: string): ParsedManifest {
  let doc: ManifestDoc;
  try {
    doc = JSON.parse(json) as ManifestDoc;
  } catch {
    return { kind: 'unknown' };
  }
  if (Array.isArray(doc.layers)) {
    const compressed = doc.layers.reduce((n, l) => n + (l.size ?? 0), 0) + (doc.config?.size ?? 0);
    return { kind: 'image', size: { compressed, layers: doc.layers.length } };
  }
  if (Array.isArray(doc.manifests)) {
    const pick =
      doc.manifests.find(
        (m) => m.platform?.architecture === arch && (m.platform?.os ?? 'linux') === 'linux',
      ) ?? (doc.manifests.length === 1 ? doc.manifests[0] : undefined);
    return pick?.digest ? { kind: 'index', digest: pick.digest } : { kind: 'index' };
  }
  return { kind: 'unknown' };
}

/** `name:tag@digest` / `name:tag` -> `name@digest` (to inspect one platform's manifest). */
export function withDigest(ref: string, digest: string): string {
  const noDigest = ref.split('@')[0] ?? ref;
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  const name = colon > slash ? noDigest.slice(0, colon) : noDigest;
  return `${name}@${digest}`;
}

/** The manifest JSON inside podman's `parsing manifest blob "..."` error (Go-quoted). */
export function quotedManifest(stderr: string): string | undefined {
  const m = /parsing manifest blob "((?:[^"\\]|\\.)*)"/.exec(stderr);
  if (!m) return undefined;
  try {
    return JSON.parse(`"${m[1]}"`) as string;
  } catch {
    return undefined;
  }
}
