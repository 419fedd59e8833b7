// What an anaconda deploy installs, from instance_info.image_source, as the kickstart's install
// source: `ostreecontainer` for oci:// container images (bootc), `liveimg` for an OS tarball or
// image over http(s) (Ironic's default), `url` for an install tree (a URL ending in "/", as
// Ironic's is_source_a_path), and file:// images that tsbm's HTTP server serves. Pure, so the
// rules are unit-tested without a node.
import { fileURLToPath } from 'node:url';
import { type ImageRef, ImageRefError, parseImageSource } from '../../module-api/image-ref.js';
import { displayUrl } from '../../module-api/image-source.js';
import { shQuoteLine } from '../../util/shell-quote.js';

type KsSourceKind = 'ostreecontainer' | 'liveimg' | 'url';

export interface KsSource {
  kind: KsSourceKind;
  /** What the installer fetches: a container reference (no scheme) or a URL. */
  location: string;
  /** oci:// sources: the reference and its registry (pull secret, insecure registries). */
  image?: ImageRef;
  /** liveimg: the SHA-256 the installer checks (`--checksum`), when the node gives one. */
  sha256?: string;
  /** file:// sources: the controller file tsbm serves; `location` is set once it is published. */
  file?: string;
  /** For messages: the source with any credentials masked. */
  shown: string;
}

export class KsSourceError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

/** A value that goes into a kickstart line in double quotes: nothing there may break out of them. */
function kickstartSafe(value: string, what: string): string {
  if (/["\\\s$`]/.test(value) || value === '') {
    throw new KsSourceError(`${what} contains a quote, backslash, dollar, backquote or space, which a kickstart line cannot carry`, 'percent-encode them in the URL');
  }
  return value;
}

export interface KsSourceInput {
  source: unknown;
  hashAlgo: unknown;
  hashValue: unknown;
}

export function planKickstartSource(i: KsSourceInput): KsSource {
  if (typeof i.source !== 'string' || i.source.trim() === '') {
    throw new KsSourceError('no image to install', 'set instance_info.image_source to oci://registry/path:tag, an http(s) URL of an OS tarball or image, or an install tree URL ending in /');
  }
  const source = i.source.trim();
  if (source.startsWith('oci://')) {
    let image: ImageRef;
    try {
      image = parseImageSource(source);
    } catch (e) {
      if (e instanceof ImageRefError) throw new KsSourceError(e.message, 'use oci://registry/path:tag');
      throw e;
    }
    return { kind: 'ostreecontainer', location: kickstartSafe(image.ref, 'image_source'), image, shown: source };
  }
  if (/^file:\/\//i.test(source)) {
    const file = fileURLToPath(source);
    if (file.endsWith('/')) throw new KsSourceError(`image_source ${source} is a directory`, 'serve an install tree over http(s), or give a tarball or image file');
    return { kind: 'liveimg', location: '', file, ...sha256Of(i), shown: source };
  }
  if (!/^https?:\/\//i.test(source)) {
    throw new KsSourceError(
      `image_source ${JSON.stringify(displayUrl(source))} is neither oci://, http(s):// nor file://`,
      'give oci://registry/path:tag (ostreecontainer), an http(s) URL of an OS tarball or image (liveimg), or an install tree URL ending in / (url)',
    );
  }
  let u: URL;
  try {
    u = new URL(source);
  } catch {
    throw new KsSourceError('image_source is not a valid URL', 'check instance_info.image_source');
  }
  const location = kickstartSafe(u.href, 'image_source');
  if (u.pathname.endsWith('/')) return { kind: 'url', location, shown: displayUrl(location) };
  // The installer tells a tarball (.tar, .tgz, .tar.gz, .tbz, .tar.bz2, .txz, .tar.xz) from a
  // mountable image by the name, as Ironic's disk_file_extension does.
  return { kind: 'liveimg', location, ...sha256Of(i), shown: displayUrl(location) };
}

/** liveimg checks SHA-256 only; other algorithms cannot be passed to the installer. */
function sha256Of(i: KsSourceInput): { sha256?: string } {
  const algo = typeof i.hashAlgo === 'string' && i.hashAlgo !== '' ? i.hashAlgo.toLowerCase() : 'sha256';
  if (typeof i.hashValue !== 'string' || i.hashValue.trim() === '') return {};
  const v = i.hashValue.trim().toLowerCase();
  if (algo !== 'sha256') throw new KsSourceError(`liveimg checks SHA-256 only, and image_os_hash_algo is ${algo}`, 'give the SHA-256 of the image (image_os_hash_algo: sha256)');
  if (!/^[0-9a-f]{64}$/.test(v)) throw new KsSourceError('image_os_hash_value is not a sha256 checksum (64 hex digits)', 'check image_os_hash_value');
  return { sha256: v };
}

/**
 * The kickstart command line for a planned source (location set). Anaconda splits command lines
 * as a POSIX shell does (pykickstart's shlex), so the one quoting helper quotes the URL.
 */
export function sourceLine(s: KsSource): string {
  switch (s.kind) {
    case 'ostreecontainer':
      // tsbm's bootc deploy trusts the registry and its digests, not signatures; so does this.
      return `ostreecontainer --url=${shQuoteLine(s.location, 'image_source')} --transport=registry --no-signature-verification`;
    case 'liveimg':
      return `liveimg --url=${shQuoteLine(s.location, 'image_source')}${s.sha256 ? ` --checksum=${s.sha256}` : ''}`;
    case 'url':
      return `url --url=${shQuoteLine(s.location, 'image_source')}`;
  }
}
