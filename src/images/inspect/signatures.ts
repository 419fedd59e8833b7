// Formats known by a magic number at a fixed place, none of which tsbm writes: they are recognised
// so a refusal can say what the image really is (vmdk, vhd, vhdx, vdi, qed, luks, iso).
import { hasMagic, safeSize, u32le, u64be, u64le } from './bytes.js';
import type { ImageFormat } from './types.js';

interface Signature {
  format: Exclude<ImageFormat, 'raw' | 'qcow2'>;
  matches(b: Uint8Array): boolean;
  virtualSize?(b: Uint8Array): number | undefined;
  /** Why qemu-img must not open it even when asked to, beyond its being a format tsbm does not write. */
  unsafe?(b: Uint8Array): string[];
}

const VDI_SIGNATURE = 0xbeda107f;
const SECTOR = 512n;

/** ISO 9660 (CD001) or UDF (BEA01) volume descriptors, at the 2 KiB sectors 16 to 18. */
function isoDescriptor(b: Uint8Array): boolean {
  return [0x8001, 0x8801, 0x9001].some((off) => hasMagic(b, off, 'CD001') || hasMagic(b, off, 'BEA01'));
}

export const SIGNATURES: readonly Signature[] = [
  {
    format: 'vmdk',
    matches: (b) => hasMagic(b, 0, 'KDMV') || hasMagic(b, 0, 'COWD') || hasMagic(b, 0, '# Disk DescriptorFile'),
    virtualSize: (b) => {
      const sectors = hasMagic(b, 0, 'KDMV') ? u64le(b, 12) : undefined;
      return sectors === undefined ? undefined : safeSize(sectors * SECTOR);
    },
    // A descriptor names its extents: other files, read by whoever opens it.
    unsafe: (b) => (hasMagic(b, 0, '# Disk DescriptorFile') ? ['it is a vmdk descriptor naming other files as its extents'] : []),
  },
  { format: 'vhd', matches: (b) => hasMagic(b, 0, 'conectix'), virtualSize: (b) => safeSize(u64be(b, 48)) },
  { format: 'vhdx', matches: (b) => hasMagic(b, 0, 'vhdxfile') },
  { format: 'vdi', matches: (b) => u32le(b, 0x40) === VDI_SIGNATURE, virtualSize: (b) => safeSize(u64le(b, 0x170)) },
  { format: 'qed', matches: (b) => hasMagic(b, 0, 'QED\0'), virtualSize: (b) => safeSize(u64le(b, 48)) },
  { format: 'luks', matches: (b) => hasMagic(b, 0, 'LUKS\xba\xbe') },
  { format: 'iso', matches: isoDescriptor },
];
