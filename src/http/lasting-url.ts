// An ISO a node boots after the run (deploy-ramdisk.yml: the ISO is the instance, the boot
// override persistent) needs a URL that outlives the run. The run's own HTTP server, which
// serves local files, stops when the run ends, so the node's next boot would find nothing: a
// local ISO is booted that way only from a lasting web server that serves it (instance_iso_url),
// and is refused without one. The preflight (before anything is touched) and vmedia_boot (at
// the insertion) decide it here, alike.
import { basename } from 'node:path';

export type LastingUrl = { url: string } | { problem: string; fix: string };

const isUrl = (s: string) => /^https?:\/\//i.test(s);

/**
 * Where the BMC fetches `image` from for a boot that outlives the run. `servedFrom` is the
 * lasting server's URL of the file, or of its directory (ending in `/`, the file's name is
 * appended). `label` names the setting in messages (instance_iso).
 */
export function lastingUrlOf(image: string, servedFrom: string | undefined, label: string): LastingUrl {
  const base = servedFrom?.trim() || undefined;
  if (isUrl(image)) {
    if (base) {
      return {
        problem: `${label} is already a URL (${image}) and instance_iso_url is set too (${base}): which one the node boots is not clear`,
        fix: 'keep one: instance_iso_url is for a local instance_iso that a lasting web server serves',
      };
    }
    return { url: image };
  }
  if (!base) {
    return {
      problem: `${label} ${image} is a local file, which tsbm serves only while the run lasts (its own HTTP server stops with it), and the node boots this ISO again at every reboot: its next boot would find nothing`,
      fix: `publish the ISO on a web server that outlives the run and set instance_iso_url to its URL (or to the directory's URL ending in /, where ${basename(image)} is appended), or give ${label} as that http(s) URL`,
    };
  }
  if (!isUrl(base)) return { problem: `instance_iso_url ${base} is not an http(s) URL`, fix: 'give the URL the BMCs fetch the ISO from, e.g. http://images.lab/isos/' };
  return { url: base.endsWith('/') ? `${base}${encodeURIComponent(basename(image))}` : base };
}
