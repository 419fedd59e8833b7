// The simulated registry's catalogue: what `podman` on a simulated ramdisk can pull.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SIM_REGISTRY = 'registry.sim.tsbm:5000';

export interface SimImage {
  ref: string;
  sizeMiB: number; // uncompressed
  compressedMiB: number;
  bootc: boolean;
}

export const SIM_IMAGES: SimImage[] = [
  { ref: `${SIM_REGISTRY}/tsbm/bootc-demo:latest`, sizeMiB: 1400, compressedMiB: 620, bootc: true },
  { ref: `${SIM_REGISTRY}/tsbm/not-bootc:latest`, sizeMiB: 80, compressedMiB: 30, bootc: false },
  { ref: `${SIM_REGISTRY}/tsbm/huge-bootc:latest`, sizeMiB: 60_000, compressedMiB: 9_000, bootc: true },
];

export function writeImageCatalogue(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const img of SIM_IMAGES) {
    const key = img.ref.replace(/[/:@]/g, '_');
    const id = `sha256:${Buffer.from(img.ref).toString('hex').padEnd(64, '0').slice(0, 64)}`;
    writeFileSync(
      join(dir, `${key}.env`),
      `ID=${id}\nSIZE_MIB=${img.sizeMiB}\nCOMPRESSED_MIB=${img.compressedMiB}\nBOOTC=${img.bootc ? 1 : 0}\n`,
    );
  }
}
