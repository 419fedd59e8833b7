// The module registry: the executor, the loader, `tsbm modules` and the schema writer find
// modules only through here. What the loader and the docs need of a module (name, arguments,
// summary, ...) comes from catalog.ts, which `npm run schemas` generates from the module files
// (a test fails when it is stale); a module's file, with its code and libraries (Redfish,
// configdrive, image writing, ...), is imported the first time a task runs it. So a run loads
// only the modules its playbook uses.
// Add a module: one line in LOADERS, then `npm run schemas`.
import { MODULE_CATALOG } from './catalog.js';
import type { ModuleContext, ModuleDef, ModuleInfo, ModuleResult } from '../module-api/types.js';

type Loader = () => Promise<ModuleDef>;
const def = (m: unknown) => m as ModuleDef;

/** Module name -> its implementation (the module file's definition). */
const LOADERS: Record<string, Loader> = {
  redfish_boot_device: () => import('./redfish_boot_device.js').then((m) => def(m.redfishBootDevice)),
  redfish_power: () => import('./redfish_power.js').then((m) => def(m.redfishPower)),
  vmedia_boot: () => import('./vmedia_boot.js').then((m) => def(m.vmediaBoot)),
  assert: () => import('./assert.js').then((m) => def(m.assertModule)),
  debug: () => import('./debug.js').then((m) => def(m.debugModule)),
  fail: () => import('./fail.js').then((m) => def(m.failModule)),
  meta: () => import('./meta.js').then((m) => def(m.metaModule)),
  pause: () => import('./pause.js').then((m) => def(m.pauseModule)),
  set_fact: () => import('./set_fact.js').then((m) => def(m.setFactModule)),
  bootc_install: () => import('./bootc_install.js').then((m) => def(m.bootcInstallModule)),
  configdrive_write: () => import('./configdrive_write.js').then((m) => def(m.configdriveWriteModule)),
  podman_pull: () => import('./podman_pull.js').then((m) => def(m.podmanPullModule)),
  root_device: () => import('./root_device.js').then((m) => def(m.rootDeviceModule)),
  wait_agent: () => import('./wait_agent.js').then((m) => def(m.waitAgentModule)),
  deploy_preflight: () => import('./deploy_preflight.js').then((m) => def(m.deployPreflightModule)),
  erase_disk_metadata: () => import('./erase_disk_metadata.js').then((m) => def(m.eraseDiskMetadataModule)),
  image_write: () => import('./image_write.js').then((m) => def(m.imageWriteModule)),
  kickstart_media: () => import('./kickstart_media.js').then((m) => def(m.kickstartMediaModule)),
  anaconda_wait: () => import('./anaconda_wait.js').then((m) => def(m.anacondaWaitModule)),
  command: () => import('./command.js').then((m) => def(m.commandModule)),
  copy: () => import('./copy.js').then((m) => def(m.copyModule)),
  facts: () => import('./facts.js').then((m) => def(m.factsModuleDef)),
  gather_facts: () => import('./facts.js').then((m) => def(m.gatherFactsModule)),
  file: () => import('./file.js').then((m) => def(m.fileModule)),
  shell: () => import('./shell.js').then((m) => def(m.shellModule)),
  slurp: () => import('./slurp.js').then((m) => def(m.slurpModule)),
  stat: () => import('./stat.js').then((m) => def(m.statModule)),
  template: () => import('./template.js').then((m) => def(m.templateModule)),
  wait_for: () => import('./wait_for.js').then((m) => def(m.waitForModule)),
  wait_for_connection: () => import('./wait_for_connection.js').then((m) => def(m.waitForConnectionModule)),
};

const loaded = new Map<string, Promise<ModuleDef>>();

/** The module file's own definition (imported once). */
export function loadModule(name: string): Promise<ModuleDef> {
  let p = loaded.get(name);
  if (!p) {
    const load = LOADERS[name];
    p = load ? load() : Promise.reject(new Error(`module ${name} has no implementation in registry.ts`));
    loaded.set(name, p);
  }
  return p;
}

/** Every module file's own definition, sorted by name (for the catalog writer and its test). */
export async function loadModuleDefs(): Promise<ModuleDef[]> {
  const defs = await Promise.all(Object.keys(LOADERS).map((n) => loadModule(n)));
  return defs.sort((a, b) => a.name.localeCompare(b.name));
}

/** A module as the catalog describes it, whose run() imports the implementation on first use. */
function lazyModule(info: ModuleInfo): ModuleDef {
  return {
    ...info,
    run: async (ctx: ModuleContext, args: unknown): Promise<ModuleResult> => (await loadModule(info.name)).run(ctx, args),
  };
}

const byName = new Map<string, ModuleDef>();
for (const info of MODULE_CATALOG) byName.set(info.name, lazyModule(info));

export function getModule(name: string): ModuleDef | undefined {
  return byName.get(name);
}

export function allModules(): ModuleDef[] {
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** Module names whose implementation the registry knows (the catalog must list exactly these). */
export function moduleLoaderNames(): string[] {
  return Object.keys(LOADERS).sort();
}
