// The module list: every module tsbm knows, one line each. The loader, the executor,
// `tsbm modules` and the build (schemas/, dist/validators/) find modules only through here.
// A module is one file (src/modules/CAPABILITY/NAME.ts) whose definition is data next to its
// run(), importing what run() needs at the top. Loading stays lazy in one place: the build turns
// this list into one file of plain definitions (scripts/module-list.mjs) whose run() imports the
// module's file the first time a task runs it, so start-up reads no module file and a run loads
// only the modules its playbook uses (test/integration/module-list.test.ts keeps that honest).
// Add a module: its file, and one line here.
import type { ModuleDef } from '../module-api/types.js';
import { anacondaWaitModule } from './anaconda/anaconda_wait.js';
import { assertModule } from './flow/assert.js';
import { bootcInstallModule } from './bootc/bootc_install.js';
import { commandModule } from './commands/command.js';
import { configdriveWriteModule } from './configdrive/configdrive_write.js';
import { copyModule } from './files/copy.js';
import { debugModule } from './flow/debug.js';
import { deployPreflightModule } from './preflight/deploy_preflight.js';
import { eraseDiskMetadataModule } from './disk/erase_disk_metadata.js';
import { factsModule } from './facts/facts.js';
import { failModule } from './flow/fail.js';
import { fileModule } from './files/file.js';
import { gatherFactsModule } from './facts/gather_facts.js';
import { imageWriteModule } from './image/image_write.js';
import { installerBootModule } from './anaconda/installer_boot.js';
import { kickstartMediaModule } from './anaconda/kickstart_media.js';
import { ramdiskMediaModule } from './ramdisk/ramdisk_media.js';
import { metaModule } from './flow/meta.js';
import { pauseModule } from './flow/pause.js';
import { podmanPullModule } from './bootc/podman_pull.js';
import { redfishBootDeviceModule } from './redfish/redfish_boot_device.js';
import { redfishPowerModule } from './redfish/redfish_power.js';
import { redfishEndSafeModule } from './redfish/redfish_end_safe.js';
import { rootDeviceModule } from './disk/root_device.js';
import { setFactModule } from './flow/set_fact.js';
import { shellModule } from './commands/shell.js';
import { slurpModule } from './files/slurp.js';
import { statModule } from './files/stat.js';
import { templateModule } from './files/template.js';
import { vmediaBootModule } from './redfish/vmedia_boot.js';
import { waitAgentModule } from './ramdisk/wait_agent.js';
import { waitForModule } from './flow/wait_for.js';
import { waitForConnectionModule } from './flow/wait_for_connection.js';

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
  ramdiskMediaModule,
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
