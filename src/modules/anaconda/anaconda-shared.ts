// What the anaconda modules (kickstart_media, anaconda_wait, deploy_preflight) share: the run's
// installer callback endpoint, and which kickstart template a node uses.
import { readFileSync } from 'node:fs';
import { firstSet } from '../../inventory/node-data.js';
import type { FileServer } from '../../http/file-server.js';
import { InstallCallbacks } from '../../http/install-callbacks.js';
import { runFileServer } from '../../http/run-file-server.js';
import type { ModuleContext } from '../../module-api/types.js';
import { findControllerFile } from '../../module-api/controller-file.js';
import { assertAllowedPath } from '../../module-api/allowed-paths.js';

/** The shipped default (playbooks/templates/ks.cfg.hbs), found beside the playbook. */
const DEFAULT_KS_TEMPLATE = 'ks.cfg.hbs';

/** The run's HTTP server and its installer callback endpoint (attached once per server). */
export async function installCallbacks(ctx: ModuleContext): Promise<{ server: FileServer; callbacks: InstallCallbacks }> {
  const server = await runFileServer(ctx.services, ctx.vars);
  const callbacks = ctx.services.get(`install-callbacks:${server.url}`, () => InstallCallbacks.attach(server));
  return { server, callbacks };
}

/** The template a node's kickstart comes from: the argument, instance_info.ks_template (Ironic's), ks_template, the default. */
export function kickstartTemplate(ctx: ModuleContext, arg: string | undefined): { file: string; text: string } {
  const name = firstSet(arg, ctx.vars, 'instance_info.ks_template', 'ks_template') ?? DEFAULT_KS_TEMPLATE;
  const file = findControllerFile(ctx, String(name), 'templates');
  // Beside the playbook or its role (where a relative name is looked for), or in an allowed
  // directory: never `/etc/shadow` or `../../.ssh/id_ed25519` rendered into a kickstart.
  const rolePath = typeof ctx.vars.role_path === 'string' ? [ctx.vars.role_path] : [];
  assertAllowedPath(ctx, 'ks_template', file, [ctx.services.playbookDir, ...rolePath]);
  return { file, text: readFileSync(file, 'utf8') };
}
