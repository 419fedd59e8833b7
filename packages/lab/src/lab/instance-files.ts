// What the deployed "instance" sees at first boot: the config drive's files, read from the
// node's disk (the partition holding an ISO labelled config-2) into the instance's sandbox
// under /mnt/config, the way cloud-init mounts it.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DiskLayout } from './disk-layout.js';
import { isoVolumeId, readIsoFiles } from 'tsbm/lib/configdrive/iso9660-read.js';

const MAX_ISO = 64 * 1024 * 1024;

export async function extractInstanceFiles(diskFile: string, layout: DiskLayout, instRoot: string): Promise<boolean> {
  rmSync(instRoot, { recursive: true, force: true });
  mkdirSync(join(instRoot, 'mnt/config'), { recursive: true });
  const fh = await open(diskFile, 'r');
  try {
    for (const p of layout.partitions) {
      // Look at the primary volume descriptor first; read the whole image only for config-2.
      const head = Buffer.alloc(17 * 2048);
      await fh.read(head, 0, head.length, p.startBytes);
      if (isoVolumeId(head)?.toLowerCase() !== 'config-2') continue;
      const bytes = head.readUInt32LE(16 * 2048 + 80) * 2048;
      if (bytes > MAX_ISO || bytes > p.sizeBytes) continue;
      const buf = Buffer.alloc(bytes);
      await fh.read(buf, 0, bytes, p.startBytes);
      for (const f of readIsoFiles(buf)) {
        const dest = join(instRoot, 'mnt/config', f.path);
        if (!dest.startsWith(join(instRoot, 'mnt/config'))) continue; // hostile names stay inside
        mkdirSync(dirname(dest), { recursive: true });
        writeFileSync(dest, f.data);
      }
      return true;
    }
    return false;
  } finally {
    await fh.close();
  }
}
