// A block device as tsbm sees it on a ramdisk: lsblk's fields normalised across versions.
export interface Disk {
  /** Full device path, e.g. /dev/sda. */
  name: string;
  /** Kernel name without /dev/ (sda, nvme0n1, loop3). */
  kname: string;
  type: string;
  sizeBytes: number;
  model?: string;
  vendor?: string;
  serial?: string;
  wwn?: string;
  wwnWithExtension?: string;
  wwnVendorExtension?: string;
  hctl?: string;
  tran?: string;
  rotational: boolean;
  readOnly: boolean;
  removable: boolean;
  /** /dev/disk/by-path/... link, when it was looked up. */
  byPath?: string;
}

export const GIB = 1024 ** 3;
export const MIB = 1024 ** 2;

/** Ironic's size unit for hints: whole GiB, rounded down. */
export function sizeGiB(d: Disk): number {
  return Math.floor(d.sizeBytes / GIB);
}

/** One line per disk for error messages ("no disk matches"), every property an operator can hint on. */
export function describeDisk(d: Disk): string {
  const parts = [
    `${d.name}`,
    `size=${sizeGiB(d)}GiB (${d.sizeBytes} bytes)`,
    `type=${d.type}`,
    `rotational=${d.rotational}`,
  ];
  const opt: Array<[string, string | undefined]> = [
    ['model', d.model],
    ['vendor', d.vendor],
    ['serial', d.serial],
    ['wwn', d.wwn],
    ['hctl', d.hctl],
    ['tran', d.tran],
    ['by_path', d.byPath],
  ];
  for (const [k, v] of opt) if (v) parts.push(`${k}=${v}`);
  if (d.readOnly) parts.push('read-only');
  return parts.join(' ');
}
