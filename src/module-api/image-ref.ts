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
  // The registry lands in auth files, registries.conf and kickstart lines: a host name or
  // address and a port, as the distribution reference grammar has it, nothing else.
  if (hasRegistry && !REGISTRY.test(first)) {
    throw new ImageRefError(`image_source "${s}" names the registry ${JSON.stringify(first)}, which is not a host name or address with an optional port`);
  }
  return { ref, registry: hasRegistry ? first : 'docker.io' };
}

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const REGISTRY = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*|\\[[0-9A-Fa-f:.]+\\])(?::[0-9]{1,5})?$`);

/** Where a reference lives in its registry's API: repository path and tag or digest. */
export interface ImageCoordinates {
  registry: string;
  /** Repository path; Docker Hub's one-word names get `library/`. */
  repository: string;
  /** The digest when there is one (it wins over a tag), else the tag, else `latest`. */
  reference: string;
}

export function coordinatesOf(img: ImageRef): ImageCoordinates {
  const at = img.ref.indexOf('@');
  const digest = at >= 0 ? img.ref.slice(at + 1) : undefined;
  let name = at >= 0 ? img.ref.slice(0, at) : img.ref;
  const slash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  let tag: string | undefined;
  if (colon > slash) {
    tag = name.slice(colon + 1);
    name = name.slice(0, colon);
  }
  const hasRegistryPart = name.startsWith(`${img.registry}/`);
  let repository = hasRegistryPart ? name.slice(img.registry.length + 1) : name;
  if (img.registry === 'docker.io' && !repository.includes('/')) repository = `library/${repository}`;
  return { registry: img.registry, repository, reference: digest ?? tag ?? 'latest' };
}
