// sfdisk's names for GPT partition types and attribute bits: the one-letter aliases a script
// may use, the names its messages print, and the `attrs` text of `--json` and scripts.
import { isGuid } from './guid.js';

const ALIASES: Record<string, string> = {
  L: '0FC63DAF-8483-4772-8E79-3D69D8477DE4', // Linux filesystem
  S: '0657FD6D-A4AB-43C4-84E5-0933C84B4F4F', // Linux swap
  H: '933AC7E1-2EB4-4F13-B844-0E14E2AEF915', // Linux /home
  U: 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B', // EFI System
  R: 'A19D880F-05FC-4D3B-A006-743F0F84911E', // Linux RAID
  V: 'E6D6D379-F507-44C2-A23C-238F2A3DF928', // Linux LVM
};

const NAMES: Record<string, string> = {
  '0FC63DAF-8483-4772-8E79-3D69D8477DE4': 'Linux filesystem',
  '0657FD6D-A4AB-43C4-84E5-0933C84B4F4F': 'Linux swap',
  '933AC7E1-2EB4-4F13-B844-0E14E2AEF915': 'Linux home',
  'C12A7328-F81F-11D2-BA4B-00A0C93EC93B': 'EFI System',
  'A19D880F-05FC-4D3B-A006-743F0F84911E': 'Linux RAID',
  'E6D6D379-F507-44C2-A23C-238F2A3DF928': 'Linux LVM',
  '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709': 'Linux root (x86-64)',
  'B921B045-1DF0-41C3-AF44-4C6F280D3FAE': 'Linux root (ARM-64)',
  '21686148-6449-6E6F-744E-656564454649': 'BIOS boot',
  'EBD0A0A2-B9E5-4433-87C0-68B6B72699C7': 'Microsoft basic data',
};

/** A script's `type=` value as a GPT type GUID (upper case), or undefined when sfdisk refuses it on GPT. */
export function gptTypeFor(value: string): string | undefined {
  if (isGuid(value)) return value.toUpperCase();
  return ALIASES[value];
}

export function typeName(guid: string): string {
  return NAMES[guid.toUpperCase()] ?? guid.toUpperCase();
}

const ATTR_BITS: [string, bigint][] = [
  ['RequiredPartition', 0n],
  ['NoBlockIOProtocol', 1n],
  ['LegacyBIOSBootable', 2n],
];

/** `attrs` as sfdisk prints it: named bits, then `GUID:` and the type-specific bits 48-63. */
export function formatAttrs(attrs: bigint): string {
  const parts = ATTR_BITS.filter(([, b]) => (attrs >> b) & 1n).map(([n]) => n);
  const guidBits: number[] = [];
  for (let b = 48; b < 64; b++) if ((attrs >> BigInt(b)) & 1n) guidBits.push(b);
  if (guidBits.length) parts.push(`GUID:${guidBits.join(',')}`);
  return parts.join(' ');
}

/** The reverse, for a script's `attrs="..."`; undefined when a word is not one sfdisk knows. */
export function parseAttrs(text: string): bigint | undefined {
  let v = 0n;
  for (const word of text.split(/[\s,]+/).filter(Boolean)) {
    const named = ATTR_BITS.find(([n]) => n === word);
    if (named) {
      v |= 1n << named[1];
      continue;
    }
    const m = /^GUID:(\d+)$/.exec(word) ?? /^(\d+)$/.exec(word);
    const bit = m ? Number(m[1]) : Number.NaN;
    if (!(bit >= 48 && bit <= 63)) return undefined;
    v |= 1n << BigInt(bit);
  }
  return v;
}
