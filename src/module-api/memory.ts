// Memory preflight: a ramdisk keeps pulled image layers on tmpfs, so the uncompressed image
// must fit in RAM with room to spare (Ironic documents ~10 GB for a 600 MB image, never checks).
import { MIB } from './disk.js';

/** MemAvailable in bytes from /proc/meminfo text, or undefined when absent. */
export function memAvailableBytes(meminfo: string): number | undefined {
  const m = /^MemAvailable:\s+(\d+)\s*kB/m.exec(meminfo);
  return m?.[1] ? Number(m[1]) * 1024 : undefined;
}

/** Fixed headroom for podman's own use, unpacking and the ramdisk's processes. */
export const MEMORY_MARGIN_BYTES = 512 * MIB;

/**
 * Bytes a pull needs: compressed layers are downloaded and unpacked side by side, so the
 * compressed size is counted on top of the uncompressed one, plus a fixed margin. When only a
 * compressed size is known, unpacked images are typically ~2.5x their compressed layers.
 */
export function neededBytes(sizes: { compressed?: number; uncompressed?: number }): number | undefined {
  const { compressed, uncompressed } = sizes;
  if (uncompressed !== undefined) return uncompressed + (compressed ?? 0) + MEMORY_MARGIN_BYTES;
  if (compressed !== undefined) return Math.ceil(compressed * 3.5) + MEMORY_MARGIN_BYTES;
  return undefined;
}

export function fmtMiB(bytes: number): string {
  return `${Math.ceil(bytes / MIB)} MiB`;
}
