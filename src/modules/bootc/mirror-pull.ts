// What a ramdisk pulls through the run's image mirror: the manifest digest the controller filled,
// never the tag (src/images/oci-mirror.ts). The image then gets the tag's name locally with
// `podman tag`, so bootc_install and the installed system see the reference the operator gave.
import { coordinatesOf, type ImageRef } from '../../module-api/image-ref.js';

export function byFilledDigest(img: ImageRef, digest: string): { pull: string; tag?: string[] } {
  const c = coordinatesOf(img);
  // A reference by digest is already immutable: pulled as it is.
  if (c.reference.startsWith('sha256:')) return { pull: img.ref };
  const pull = `${c.registry}/${c.repository}@${digest}`;
  return { pull, tag: ['podman', 'tag', pull, img.ref] };
}
