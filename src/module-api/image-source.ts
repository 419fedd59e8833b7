// What image_write is asked to write, checked before anything touches the node: where the
// image comes from (http(s) URL, or a controller file tsbm serves), its format, and the hash
// it must have. Pure, so the rules are unit-tested without a ramdisk.
import { fileURLToPath } from 'node:url';

export type HashAlgo = 'sha256' | 'sha512' | 'md5';
type DiskFormat = 'raw' | 'qcow2';

export interface ImagePlan {
  /** http(s) URL, or a controller path for `file://` sources. */
  kind: 'http' | 'file';
  location: string;
  /** The declared format, else a guess from the name: the image's content decides (src/images/inspect/). */
  format: DiskFormat;
  /** image_disk_format as the operator gave it: the content must agree. */
  declared?: DiskFormat;
  algo: HashAlgo;
  /** Lower-case hex. */
  hash: string;
}

export class ImagePlanError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

const HEX_LEN: Record<HashAlgo, number> = { md5: 32, sha256: 64, sha512: 128 };

export interface ImagePlanInput {
  source: unknown;
  algo: unknown;
  hash: unknown;
  format: unknown;
  allowMd5: boolean;
}

export function planImage(i: ImagePlanInput): ImagePlan {
  if (typeof i.source !== 'string' || i.source.trim() === '') {
    throw new ImagePlanError(
      'no image to write',
      'set instance_info.image_source to an http(s) or file:// URL',
    );
  }
  const source = i.source.trim();
  let kind: ImagePlan['kind'];
  let location: string;
  if (/^https?:\/\//i.test(source)) {
    let u: URL;
    try {
      u = new URL(source);
    } catch {
      throw new ImagePlanError(`image_source is not a valid URL`, 'check instance_info.image_source');
    }
    // The URL reaches curl through a config line in double quotes; these cannot be escaped there.
    if (/["\\\s]/.test(source)) {
      throw new ImagePlanError(
        'image_source contains a quote, backslash or space',
        'percent-encode them in the URL',
      );
    }
    kind = 'http';
    location = u.href;
  } else if (/^file:\/\//i.test(source)) {
    kind = 'file';
    location = fileURLToPath(source);
  } else if (source.startsWith('oci://')) {
    throw new ImagePlanError(
      'image_source is an OCI reference; image_write writes disk images',
      'use playbooks/deploy-bootc.yml for oci:// images, or give an http(s)/file:// disk image URL',
    );
  } else {
    throw new ImagePlanError(
      `image_source ${JSON.stringify(source.replace(/\/\/[^@/]*@/, '//***@'))} is not an http(s) or file:// URL`,
      'give http(s)://host/path/image.raw or file:///path/on/controller',
    );
  }

  const given = i.format === undefined || i.format === null || i.format === '' ? undefined : String(i.format);
  const format = given ?? guessFormat(location);
  if (format !== 'raw' && format !== 'qcow2') {
    throw new ImagePlanError(
      `image_disk_format ${JSON.stringify(format)} is not supported`,
      'use raw or qcow2',
    );
  }
  const algo =
    i.algo === undefined || i.algo === null || i.algo === '' ? 'sha256' : String(i.algo).toLowerCase();
  if (algo !== 'sha256' && algo !== 'sha512' && algo !== 'md5') {
    throw new ImagePlanError(
      `image_os_hash_algo ${JSON.stringify(algo)} is not supported`,
      'use sha256 or sha512',
    );
  }
  if (algo === 'md5' && !i.allowMd5) {
    throw new ImagePlanError(
      'image_os_hash_algo md5 is refused: MD5 collisions are cheap to make',
      'publish a sha256 or sha512 checksum, or set allow_md5: true to accept the risk',
    );
  }
  if (typeof i.hash !== 'string' || i.hash.trim() === '') {
    throw new ImagePlanError(
      'image_os_hash_value is required: an unverified image is never written',
      `set instance_info.image_os_hash_value to the image's ${algo} checksum`,
    );
  }
  const hash = i.hash.trim().toLowerCase();
  if (!new RegExp(`^[0-9a-f]{${HEX_LEN[algo]}}$`).test(hash)) {
    throw new ImagePlanError(
      `image_os_hash_value is not a ${algo} checksum (${HEX_LEN[algo]} hex digits)`,
      'check image_os_hash_algo and image_os_hash_value belong together',
    );
  }
  return { kind, location, format, ...(given ? { declared: format } : {}), algo, hash };
}

function guessFormat(location: string): DiskFormat {
  return /\.qcow2?(\?|$)/i.test(location) ? 'qcow2' : 'raw';
}

/** The URL with any user:password@ masked, for messages (the real value is also redacted). */
export function displayUrl(url: string): string {
  return url.replace(/^(\w+:\/\/)[^@/]*@/, '$1***@');
}

/**
 * Parts of a URL that must be registered as secrets before the URL goes anywhere: credentials
 * in user:password@, and the whole URL when it has a query (pre-signed URLs carry tokens there).
 */
export function urlSecrets(url: string): string[] {
  try {
    const u = new URL(url);
    const out: string[] = [];
    if (u.password) out.push(decodeURIComponent(u.password), u.password);
    if (u.username || u.password || u.search) out.push(u.href, url);
    return out;
  } catch {
    return [url];
  }
}
