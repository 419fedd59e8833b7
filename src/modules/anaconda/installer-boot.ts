// How an anaconda deploy boots its installer: the distribution's installer ISO as it is
// (installer_iso), or, where the installer is served as files (Ironic's instance_info kernel,
// ramdisk and stage2), a boot ISO tsbm builds: the kernel and ramdisk in its ISO 9660 tree, and
// an El Torito UEFI image holding an EFI loader (GRUB) and a grub.cfg whose kernel command line
// carries inst.stage2= (and inst.ks= for a kickstart served at ks_url; otherwise Anaconda finds
// the OEMDRV volume by itself). Pure: the choice, the command line and the grub.cfg.

import { grubBootCfg, grubWord } from '../../util/grub-cfg.js';

/** The boot ISO's volume id: the grub.cfg finds the ISO 9660 tree by it. */
export const INSTALLER_BOOT_LABEL = 'TSBM-INSTALLER';
export const KERNEL_PATH = 'images/pxeboot/vmlinuz';
export const INITRD_PATH = 'images/pxeboot/initrd.img';
/** Where GRUB (tsbm's own or the one in an operator's ESP image) reads its configuration. */
export const GRUB_CFG_PATH = 'EFI/BOOT/grub.cfg';
/** x86's COMMAND_LINE_SIZE, terminating NUL included. */
const MAX_CMDLINE = 2047;

export class InstallerBootError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

export type InstallerBootPlan =
  | { kind: 'iso'; iso: string; from: string }
  | { kind: 'files'; kernel: string; ramdisk: string; stage2: string; appendParams: string };

export interface InstallerBootInput {
  /** installer_iso (or instance_info.installer_iso) and where it came from. */
  iso: unknown;
  isoName: string;
  kernel: unknown;
  ramdisk: unknown;
  stage2: unknown;
  /** instance_info.kernel_append_params: more kernel arguments (files form only). */
  appendParams: unknown;
}

const given = (v: unknown) => v !== undefined && v !== null && v !== '';

function text(name: string, v: unknown): string {
  if (typeof v !== 'string' || v.trim() === '') throw new InstallerBootError(`${name} must be a non-empty string (got ${JSON.stringify(v)})`, `set ${name} to an http(s) URL or a path on the controller`);
  return v.trim();
}

/** Which form this node uses; both, neither or part of the files form is an error. */
export function planInstallerBoot(i: InstallerBootInput): InstallerBootPlan {
  const files = { 'instance_info.kernel': i.kernel, 'instance_info.ramdisk': i.ramdisk, 'instance_info.stage2': i.stage2 };
  const set = Object.entries(files).filter(([, v]) => given(v)).map(([k]) => k);
  if (given(i.iso) && set.length) {
    throw new InstallerBootError(
      `${i.isoName} and ${set.join(', ')} are both set: the installer is booted from one or the other`,
      `keep ${i.isoName} (the installer ISO as it is) or instance_info.kernel, ramdisk and stage2 (tsbm builds a boot ISO from them), not both`,
    );
  }
  if (given(i.iso)) return { kind: 'iso', iso: text(i.isoName, i.iso), from: i.isoName };
  if (set.length === 0) {
    throw new InstallerBootError(
      `no ${i.isoName}, and no instance_info.kernel, ramdisk and stage2, for this node`,
      'set installer_iso or instance_info.installer_iso to the installer ISO (a boot.iso of the distribution), or instance_info.kernel, ramdisk and stage2 to its images/pxeboot/vmlinuz, initrd.img and the install tree (or images/install.img): http(s) URLs or paths on the controller',
    );
  }
  if (set.length < 3) {
    const missing = Object.keys(files).filter((k) => !set.includes(k));
    throw new InstallerBootError(`${set.join(' and ')} ${set.length === 1 ? 'is' : 'are'} set but not ${missing.join(' and ')}`, 'give all three: the kernel, the ramdisk (initrd) and stage2 (the install tree URL, or images/install.img)');
  }
  const appendParams = given(i.appendParams) ? text('instance_info.kernel_append_params', i.appendParams) : '';
  return { kind: 'files', kernel: text('instance_info.kernel', i.kernel), ramdisk: text('instance_info.ramdisk', i.ramdisk), stage2: text('instance_info.stage2', i.stage2), appendParams };
}

/** stage2 forms Anaconda (dracut) fetches itself; anything else is a controller path tsbm serves. */
export function isRemoteStage2(stage2: string): boolean {
  return /^(https?|ftp):\/\//i.test(stage2) || /^(nfs|nfs4|hd|cdrom|live):/i.test(stage2);
}

// GRUB reads the arguments as words of its own script language: plain ones stay as they are,
// others are single-quoted (literal in GRUB, no escapes), and what GRUB or the kernel could not
// carry as one argument is refused.
function grubWordOf(arg: string, name: string): string {
  const w = grubWord(arg);
  if (w === undefined) {
    throw new InstallerBootError(`${name} has an argument GRUB cannot pass as one kernel argument: ${JSON.stringify(arg)}`, 'use arguments without spaces, quotes or backslashes (percent-encode them in URLs)');
  }
  return w;
}

export interface InstallerCmdline {
  /** The arguments, in order, as the kernel receives them. */
  args: string[];
  /** The same, as GRUB script words. */
  grubArgs: string[];
}

/** inst.stage2=URL, inst.ks=URL when the kickstart is served at ks_url, then the operator's own. */
export function installerCmdline(o: { stage2Url: string; ksUrl?: string | undefined; appendParams?: string }): InstallerCmdline {
  const args = [`inst.stage2=${o.stage2Url}`, ...(o.ksUrl ? [`inst.ks=${o.ksUrl}`] : [])];
  const extra = (o.appendParams ?? '').split(/\s+/).filter(Boolean);
  for (const a of extra) {
    if (/^inst\.(stage2|ks)=/.test(a)) throw new InstallerBootError(`instance_info.kernel_append_params sets ${a.split('=')[0]}, which tsbm sets itself`, 'set instance_info.stage2 (and ks_url) instead');
  }
  const grubArgs = [grubWordOf(args[0]!, 'instance_info.stage2'), ...(o.ksUrl ? [grubWordOf(args[1]!, 'instance_info.ks_url')] : []), ...extra.map((a) => grubWordOf(a, 'instance_info.kernel_append_params'))];
  const all = [...args, ...extra];
  const length = all.join(' ').length;
  if (length > MAX_CMDLINE) throw new InstallerBootError(`the installer's kernel command line would be ${length} characters, more than the kernel takes (${MAX_CMDLINE})`, 'shorten instance_info.kernel_append_params or the URLs');
  return { args: all, grubArgs };
}

/** The grub.cfg of the boot ISO: find the ISO 9660 tree by its label, boot the kernel at once. */
export function installerGrubCfg(cmdline: InstallerCmdline): string {
  return grubBootCfg({
    comment: 'Written by tsbm: boots the installer kernel and ramdisk from this ISO.',
    label: INSTALLER_BOOT_LABEL,
    title: 'Install (tsbm)',
    kernel: KERNEL_PATH,
    initrd: INITRD_PATH,
    words: cmdline.grubArgs,
  });
}

/** The kernel arguments of a grub.cfg's first `linux` line, GRUB's single quotes removed (the simulated lab, tests). */
export function grubLinuxLine(cfg: string): { kernel: string; initrd: string | undefined; args: string[] } | undefined {
  const m = /^\s*linux(?:efi)?\s+(\S+)(.*)$/m.exec(cfg);
  if (!m) return undefined;
  const args = (m[2] ?? '').trim().split(/\s+/).filter(Boolean).map((w) => (w.startsWith("'") && w.endsWith("'") ? w.slice(1, -1) : w));
  const initrd = /^\s*initrd(?:efi)?\s+(\S+)/m.exec(cfg)?.[1];
  return { kernel: m[1]!, initrd, args };
}
