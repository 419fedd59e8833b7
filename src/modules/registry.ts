// The module registry: the executor, the loader, `tsbm modules` and the schema writer find
// modules only through here. Add one import and one entry per module file.
import type { ModuleDef } from './types.js';
import { redfishBootDevice } from './redfish_boot_device.js';
import { redfishPower } from './redfish_power.js';
import { vmediaBoot } from './vmedia_boot.js';
import { assertModule } from './assert.js';
import { debugModule } from './debug.js';
import { failModule } from './fail.js';
import { metaModule } from './meta.js';
import { pauseModule } from './pause.js';
import { setFactModule } from './set_fact.js';
import { bootcInstallModule } from './bootc_install.js';
import { configdriveWriteModule } from './configdrive_write.js';
import { podmanPullModule } from './podman_pull.js';
import { rootDeviceModule } from './root_device.js';
import { waitAgentModule } from './wait_agent.js';
import { imageWriteModule } from './image_write.js';
import { commandModule } from './command.js';
import { copyModule } from './copy.js';
import { factsModuleDef, gatherFactsModule } from './facts.js';
import { fileModule } from './file.js';
import { shellModule } from './shell.js';
import { slurpModule } from './slurp.js';
import { statModule } from './stat.js';
import { templateModule } from './template.js';
import { waitForModule } from './wait_for.js';
import { waitForConnectionModule } from './wait_for_connection.js';

const modules: ModuleDef[] = [
  redfishBootDevice as unknown as ModuleDef,
  redfishPower as unknown as ModuleDef,
  vmediaBoot as unknown as ModuleDef,
  assertModule as unknown as ModuleDef,
  debugModule as unknown as ModuleDef,
  failModule as unknown as ModuleDef,
  metaModule as unknown as ModuleDef,
  pauseModule as unknown as ModuleDef,
  setFactModule as unknown as ModuleDef,
  bootcInstallModule as unknown as ModuleDef,
  configdriveWriteModule as unknown as ModuleDef,
  podmanPullModule as unknown as ModuleDef,
  rootDeviceModule as unknown as ModuleDef,
  waitAgentModule as unknown as ModuleDef,
  imageWriteModule as unknown as ModuleDef,
  commandModule as unknown as ModuleDef,
  copyModule as unknown as ModuleDef,
  factsModuleDef as unknown as ModuleDef,
  gatherFactsModule as unknown as ModuleDef,
  fileModule as unknown as ModuleDef,
  shellModule as unknown as ModuleDef,
  slurpModule as unknown as ModuleDef,
  statModule as unknown as ModuleDef,
  templateModule as unknown as ModuleDef,
  waitForModule as unknown as ModuleDef,
  waitForConnectionModule as unknown as ModuleDef,
];

const byName = new Map<string, ModuleDef>();
for (const m of modules) byName.set(m.name, m);

export function getModule(name: string): ModuleDef | undefined {
  return byName.get(name);
}

export function allModules(): ModuleDef[] {
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}
