// What a simulated node finds on its virtual media when it boots from CD: an installer ISO (one
// with a `.treeinfo` naming a stage2 image), and the kickstart, from a volume labelled OEMDRV in
// another slot or from the inst.ks= URL in the installer's boot configuration. Media are read
// over HTTP as a BMC reads them, from loopback only (the lab reaches nothing else), the head
// of each image only (Range), bounded.
import { efiBootImage } from 'tsbm/lib/configdrive/el-torito.js';
import { fatFile, readFatFiles } from 'tsbm/lib/configdrive/fat-read.js';
import { isoVolumeId, readIsoFiles } from 'tsbm/lib/configdrive/iso9660-read.js';
import { GRUB_CFG_PATH, grubLinuxLine } from 'tsbm/lib/modules/anaconda/installer-boot.js';

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
  /** A boot ISO built from a kernel and ramdisk, booted through its El Torito UEFI entry. */
  elTorito?: { args: string[]; stage2: string; stage2Answers: boolean };
}

/** Whether `url` answers (its first bytes), as dracut's fetch of inst.stage2= would find. */
async function answers(url: string, signal?: AbortSignal): Promise<boolean> {
  return (await fetchHead(url, 1, signal)) !== undefined;
}

/**
 * A boot ISO without a .treeinfo, booted as UEFI firmware boots a CD: the El Torito catalog's
 * EFI entry, its FAT image, EFI/BOOT/BOOTX64.EFI there (an EFI binary), then GRUB's part:
 * EFI/BOOT/grub.cfg, the ISO found by the label it searches, the kernel and initrd it names
 * present in the ISO tree, and inst.stage2= on the kernel command line.
 */
async function readElToritoInstaller(head: Buffer, signal?: AbortSignal): Promise<InstallerMedia | undefined> {
  const esp = efiBootImage(head);
  if (!esp) return undefined;
  const fat = readFatFiles(esp);
  const loader = fatFile(fat, 'EFI/BOOT/BOOTX64.EFI');
  if (loader?.toString('latin1', 0, 2) !== 'MZ') return undefined;
  const cfg = fatFile(fat, GRUB_CFG_PATH)?.toString('utf8');
  const linux = cfg ? grubLinuxLine(cfg) : undefined;
  if (!cfg || !linux) return undefined;
  const label = /^\s*search\b.*--label\s+(\S+)/m.exec(cfg)?.[1];
  if (label !== undefined && label !== isoVolumeId(head)) return undefined;
  const tree = new Set(readIsoFiles(head).map((f) => `/${f.path}`));
  if (!tree.has(linux.kernel) || (linux.initrd !== undefined && !tree.has(linux.initrd))) return undefined;
  const stage2 = linux.args.find((a) => a.startsWith('inst.stage2='))?.slice('inst.stage2='.length);
  if (!stage2) return undefined;
  const ksUrl = linux.args.find((a) => a.startsWith('inst.ks='))?.slice('inst.ks='.length);
  return { bootConfig: cfg, ksUrl, elTorito: { args: linux.args, stage2, stage2Answers: await answers(stage2, signal) } };
}

/** The boot ISO as an installer, or undefined when it is something else (a ramdisk, an appliance). */
export async function readInstaller(url: string, signal?: AbortSignal): Promise<InstallerMedia | undefined> {
  const head = await fetchHead(url, HEAD_BYTES, signal);
  if (!head) return undefined;
  const files = readIsoFiles(head);
  const treeinfo = files.find((f) => f.path === '.treeinfo')?.data.toString('utf8');
  if (!treeinfo) return readElToritoInstaller(head, signal);
  if (!/^\[stage2\]/m.test(treeinfo)) return undefined;
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
