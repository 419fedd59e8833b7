// Stand-in ramdisk tools for module tests that script a single node's disk and tool answers
// directly (TSBM_SIM_STATE). The simulated lab product (`tsbm sim`) has its own sandboxed
// toolset in src/sim/ramdisk/bin; these stay test-only.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function simToolsDir(): string {
  const dir = fileURLToPath(new URL('../standin/ramdisk-tools/', import.meta.url));
  if (existsSync(`${dir}/podman`)) return dir;
  throw new Error(`stand-in ramdisk tools not found in ${dir}`);
}
