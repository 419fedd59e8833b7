// Where the simulated ramdisk tools live, for tests and the simulated lab: put this directory
// first on a simulated ramdisk's PATH and point TSBM_SIM_STATE at the node's state directory.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const SIM_TOOLS = ['podman', 'bootc', 'lsblk', 'getenforce', 'sfdisk', 'ip'] as const;

export function simToolsDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  if (existsSync(`${here}/podman`)) return here;
  // Built code runs from dist/src/sim/tools; the shell scripts stay in the source tree.
  const src = fileURLToPath(new URL('../../../../src/sim/tools/', import.meta.url));
  if (existsSync(`${src}/podman`)) return src;
  throw new Error(`simulated ramdisk tools not found next to ${here}`);
}
