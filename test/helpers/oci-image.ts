// A one-layer OCI image in memory (random layer, config, manifest), for tests whose fake
// registries serve it: no two tests share a blob.
import { createHash, randomBytes } from 'node:crypto';

export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';

/** The OCI digest of some bytes. */
export const sha = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

export interface OciTestImage {
  config: Buffer;
  layer: Buffer;
  manifest: Buffer;
}

export function ociImage(layerBytes: number): OciTestImage {
  const layer = randomBytes(layerBytes);
  const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [sha(layer)] } }));
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha(config), size: config.length },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: sha(layer), size: layer.length }],
    }),
  );
  return { config, layer, manifest };
}
