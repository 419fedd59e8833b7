// sgdisk's two-byte type codes for the partition types a deploy meets, and their GUIDs.
import { isGuid } from './guid.js';

const CODES: Record<string, string> = {
  '0700': 'EBD0A0A2-B9E5-4433-87C0-68B6B72699C7', // Microsoft basic data
  '0c01': 'E3C9E316-0B5C-4DB8-817D-F92DF00215AE', // Microsoft reserved
  '8200': '0657FD6D-A4AB-43C4-84E5-0933C84B4F4F', // Linux swap
  '8300': '0FC63DAF-8483-4772-8E79-3D69D8477DE4', // Linux filesystem
  '8302': '933AC7E1-2EB4-4F13-B844-0E14E2AEF915', // Linux /home
  '8303': '44479540-F297-41B2-9AF7-D131D5F0458A', // Linux x86 root (/)
  '8304': '4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709', // Linux x86-64 root (/)
  '8305': 'B921B045-1DF0-41C3-AF44-4C6F280D3FAE', // Linux ARM64 root (/)
  '8306': '3B8F8425-20E0-4F3B-907F-1A25A76F98E8', // Linux /srv
  '8e00': 'E6D6D379-F507-44C2-A23C-238F2A3DF928', // Linux LVM
  a504: '516E7CB4-6ECF-11D6-8FF8-00022D09712B', // FreeBSD disklabel
  ef00: 'C12A7328-F81F-11D2-BA4B-00A0C93EC93B', // EFI system partition
  ef01: '024DEE41-33E7-11D3-9D69-0008C781F39F', // MBR partition scheme
  ef02: '21686148-6449-6E6F-744E-656564454649', // BIOS boot partition
  fd00: 'A19D880F-05FC-4D3B-A006-743F0F84911E', // Linux RAID
};

export const DEFAULT_TYPE_GUID = CODES['8300']!;

/** A type given as sgdisk takes it (a hex code like ef00, or a full GUID); undefined if unknown. */
export function typeGuidFor(code: string): string | undefined {
  if (isGuid(code)) return code.toUpperCase();
  return CODES[code.toLowerCase()];
}

/** The code `sgdisk -p` shows for a type GUID (upper case; FFFF when unknown, as sgdisk does). */
export function typeCodeOf(guid: string): string {
  const g = guid.toUpperCase();
  for (const [code, v] of Object.entries(CODES)) if (v === g) return code.toUpperCase();
  return 'FFFF';
}
