// Raw disk images that start with a partition table: GPT (its header at LBA 1, for 512-byte or
// 4 KiB sectors) or an MBR (the 0x55AA boot signature with plausible partition entries). Both are
// raw: the bytes go to the disk as they are. Knowing which only makes messages clearer.
import { hasMagic } from './bytes.js';

export function partitionTable(b: Uint8Array): 'gpt' | 'mbr' | undefined {
  if (hasMagic(b, 512, 'EFI PART') || hasMagic(b, 4096, 'EFI PART')) return 'gpt';
  if (b.length < 512 || b[510] !== 0x55 || b[511] !== 0xaa) return undefined;
  // Each of the four entries' status byte is 0x00 or 0x80 in a partition table (a FAT boot
  // sector, which has the same signature, has code there).
  for (let i = 0; i < 4; i++) {
    const status = b[446 + i * 16];
    if (status !== 0x00 && status !== 0x80) return undefined;
  }
  return 'mbr';
}
