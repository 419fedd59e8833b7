// The module list: every module tsbm knows, one line each. The loader, the executor,
// `tsbm modules` and the build (schemas/, dist/validators/) find modules only through here.
// A module is one file (src/modules/NAME.ts) whose definition is data next to its run(); what
// run() needs beyond small helpers (the Redfish client, templates, the config drive, HTTP) it
// imports inside run(), so loading this list stays cheap and a run loads only the code of the
// modules its playbook uses (test/unit/module-registry.test.ts keeps that honest).
// Add a module: its file, and one line here.
import type { ModuleDef } from '../module-api/types.js';
import { anacondaWaitModule } from './anaconda_wait.js';
import { assertModule } from './assert.js';
import { bootcInstallModule } from './bootc_install.js';
import { commandModule } from './command.js';
import { configdriveWriteModule } from './configdrive_write.js';
import { copyModule } from './copy.js';
import { debugModule } from './debug.js';
import { deployPreflightModule } from './deploy_preflight.js';
import { eraseDiskMetadataModule } from './erase_disk_metadata.js';
import { factsModule } from './facts.js';
import { failModule } from './fail.js';
import { fileModule } from './file.js';
import { gatherFactsModule } from './gather_facts.js';
import { imageWriteModule } from './image_write.js';
import { installerBootModule } from './installer_boot.js';
import { kickstartMediaModule } from './kickstart_media.js';
import { metaModule } from './meta.js';
import { pauseModule } from './pause.js';
import { podmanPullModule } from './podman_pull.js';
import { redfishBootDeviceModule } from './redfish_boot_device.js';
import { redfishPowerModule } from './redfish_power.js';
import { redfishEndSafeModule } from './redfish_end_safe.js';
import { rootDeviceModule } from './root_device.js';
import { setFactModule } from './set_fact.js';
import { shellModule } from './shell.js';
import { slurpModule } from './slurp.js';
import { statModule } from './stat.js';
import { templateModule } from './template.js';
import { vmediaBootModule } from './vmedia_boot.js';
import { waitAgentModule } from './wait_agent.js';
import { waitForModule } from './wait_for.js';
import { waitForConnectionModule } from './wait_for_connection.js';

const MODULES: readonly ModuleDef[] = [
  anacondaWaitModule,
  assertModule,
  bootcInstallModule,
  commandModule,
  configdriveWriteModule,
  copyModule,
  debugModule,
  deployPreflightModule,
  eraseDiskMetadataModule,
  factsModule,
  failModule,
  fileModule,
  gatherFactsModule,
  imageWriteModule,
  installerBootModule,
  kickstartMediaModule,
  metaModule,
  pauseModule,
  podmanPullModule,
  redfishBootDeviceModule,
  redfishPowerModule,
  redfishEndSafeModule,
  rootDeviceModule,
  setFactModule,
  shellModule,
  slurpModule,
  statModule,
  templateModule,
  vmediaBootModule,
  waitAgentModule,
  waitForModule,
  waitForConnectionModule,
] as readonly ModuleDef[];

const byName = new Map<string, ModuleDef>(MODULES.map((m) => [m.name, m]));
// Sorted when first asked (a run never asks; localeCompare would load ICU's collator, ~5 ms).
let sorted: readonly ModuleDef[] | undefined;

export function getModule(name: string): ModuleDef | undefined {
  return byName.get(name);
}

/** Every module, sorted by name. */
export function allModules(): readonly ModuleDef[] {
  sorted ??= [...MODULES].sort((a, b) => (a.name < b.name ? -1 : 1));
  return sorted;
}
