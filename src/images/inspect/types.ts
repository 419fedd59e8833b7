// What the image inspector reports about an image's first bytes.

/** Formats the inspector recognises by content. Only raw and qcow2 are ever written to a disk. */
export type ImageFormat = 'raw' | 'qcow2' | 'vmdk' | 'vhd' | 'vhdx' | 'vdi' | 'qed' | 'luks' | 'iso';

/** The formats an operator may declare (`image_disk_format`) and tsbm writes. */
export type WritableFormat = 'raw' | 'qcow2';

export interface Inspection {
  format: ImageFormat;
  /** A raw image that starts with a partition table: which one. */
  table?: 'gpt' | 'mbr';
  /** The virtual disk size the format's header declares (undefined for raw: it is the file's size). */
  virtualSize?: number;
  /**
   * Why qemu-img must not open it, one phrase each ("it names a backing file (/etc/shadow)"):
   * anything that would make qemu-img read another file, or a header tsbm cannot vouch for.
   */
  unsafe: string[];
}

/** How many bytes of an image the inspector reads: enough for every header it knows. */
export const HEADER_BYTES = 64 * 1024;
