// Container image references as Ironic's bootc deploy takes them: `oci://registry/path:tag`
// (or @sha256:digest). The scheme is required so a typo'd HTTP image URL fails early.
export interface ImageRef {
  /** What podman gets: the reference without `oci://`. */
  ref: string;
  /** Registry host[:port], the key in an auth file's `auths`. */
  registry: string;
}

export class ImageRefError extends Error {}

export function parseImageSource(source: string): ImageRef {
  const s = source.trim();
  if (!s.startsWith('oci://')) {
    throw new ImageRefError(
      `image_source "${s}" is not an OCI reference; bootc deploys need "oci://registry/path:tag"`,
    );
  }
  const ref = s.slice('oci://'.length);
  if (ref === '' || /\s/.test(ref) || ref.startsWith('-')) {
    throw new ImageRefError(`image_source "${s}" has no valid reference after oci://`);
  }
  const first = ref.split('/')[0] ?? '';
  // Docker's rule: the first component is a registry when it has a dot or a port, or is localhost.
  const hasRegistry =
    ref.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  return { ref, registry: hasRegistry ? first : 'docker.io' };
}
