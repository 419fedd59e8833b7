// The module registry: the executor, the loader, `tsbm modules` and the schema writer find
// modules only through here. Add one import and one entry per module file.
import type { ModuleDef } from './types.js';
import { bootcInstallModule } from './bootc_install.js';
import { podmanPullModule } from './podman_pull.js';
import { rootDeviceModule } from './root_device.js';
import { waitAgentModule } from './wait_agent.js';

const modules: ModuleDef[] = [
  bootcInstallModule as unknown as ModuleDef,
  podmanPullModule as unknown as ModuleDef,
  rootDeviceModule as unknown as ModuleDef,
  waitAgentModule as unknown as ModuleDef,
];

const byName = new Map<string, ModuleDef>();
for (const m of modules) byName.set(m.name, m);

export function getModule(name: string): ModuleDef | undefined {
  return byName.get(name);
}

export function allModules(): ModuleDef[] {
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}
