// What a simulated node finds on its virtual media when it boots from CD: an installer ISO (one
// with a `.treeinfo` naming a stage2 image), and the kickstart, from a volume labelled OEMDRV in
// another slot or from the inst.ks= URL in the installer's boot configuration. Media are read
// over HTTP as a BMC reads them, from loopback only (the lab reaches nothing else), the head
// of each image only (Range), bounded.
import { isoVolumeId, readIsoFiles } from '../../configdrive/iso9660-read.js';

/** Enough for the lab's ISOs and for the descriptors and first files of a big one. */
const HEAD_BYTES = 8 * 1024 * 1024;
const KS_BYTES = 1024 * 1024;

export function isLoopbackUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return (u.protocol === 'http:' || u.protocol === 'https:') && /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(u.hostname);
  } catch {
    return false;
  }
}

/** At most `max` bytes from the start of `url`; undefined when it cannot be read. */
async function fetchHead(url: string, max: number, signal?: AbortSignal): Promise<Buffer | undefined> {
  if (!isLoopbackUrl(url)) return undefined;
  const ac = new AbortController();
  const onAbort = () => ac.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const res = await fetch(url, { headers: { Range: `bytes=0-${max - 1}` }, signal: ac.signal });
    if (!res.ok || !res.body) return undefined;
    const chunks: Buffer[] = [];
    let got = 0;
    for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) {
      chunks.push(Buffer.from(c));
      got += c.length;
      if (got >= max) break; // a server that ignores Range sends it all: stop reading
    }
    ac.abort();
    return Buffer.concat(chunks).subarray(0, max);
  } catch {
    return undefined;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

export interface InstallerMedia {
  /** The installer's boot configuration (grub.cfg), for inst.ks=. */
  bootConfig: string;
  /** inst.ks= from the boot configuration, if any. */
  ksUrl: string | undefined;
}

/** The boot ISO as an installer, or undefined when it is something else (a ramdisk, an appliance). */
export async function readInstaller(url: string, signal?: AbortSignal): Promise<InstallerMedia | undefined> {
  const head = await fetchHead(url, HEAD_BYTES, signal);
  if (!head) return undefined;
  const files = readIsoFiles(head);
  const treeinfo = files.find((f) => f.path === '.treeinfo')?.data.toString('utf8');
  if (!treeinfo || !/^\[stage2\]/m.test(treeinfo)) return undefined;
  const bootConfig = files.find((f) => /^EFI\/BOOT\/grub\.cfg$/i.test(f.path))?.data.toString('utf8') ?? '';
  const ksUrl = /(?:^|\s)inst\.ks=(\S+)/m.exec(bootConfig)?.[1];
  return { bootConfig, ksUrl };
}

/** ks.cfg from the first of `urls` that is an ISO volume labelled OEMDRV. */
export async function readOemdrvKickstart(urls: string[], signal?: AbortSignal): Promise<{ url: string; text: string } | undefined> {
  for (const url of urls) {
    const head = await fetchHead(url, HEAD_BYTES, signal);
    if (!head || head.length < 17 * 2048 || isoVolumeId(head) !== 'OEMDRV') continue;
    const ks = readIsoFiles(head).find((f) => f.path === 'ks.cfg');
    if (ks) return { url, text: ks.data.toString('utf8') };
  }
  return undefined;
}

/** A kickstart fetched from inst.ks=http(s)://... (what dracut does before Anaconda starts). */
export async function fetchKickstart(url: string, signal?: AbortSignal): Promise<string | undefined> {
  if (!isLoopbackUrl(url)) return undefined;
  try {
    const res = await fetch(url, signal ? { signal } : {});
    if (!res.ok) return undefined;
    const text = await res.text();
    return text.length <= KS_BYTES ? text : undefined;
  } catch {
    return undefined;
  }
}
