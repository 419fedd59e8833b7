// What ramdisk_media and wait_agent share: the run's ramdisk callback endpoint and the
// registrations ramdisk_media made, by host (wait_agent only looks them up).
import { AgentCallbacks, type AgentRegistration } from '../../http/agent-callbacks.js';
import type { FileServer } from '../../http/file-server.js';
import { runFileServer } from '../../http/run-file-server.js';
import type { ModuleContext } from '../../module-api/types.js';

const REGISTRATIONS = 'ramdisk-agent-registrations';

export async function agentCallbacks(ctx: ModuleContext): Promise<{ server: FileServer; callbacks: AgentCallbacks }> {
  const server = await runFileServer(ctx.services, ctx.vars);
  const callbacks = ctx.services.get(`agent-callbacks:${server.url}`, () => AgentCallbacks.attach(server));
  return { server, callbacks };
}

export function rememberRegistration(ctx: ModuleContext, reg: AgentRegistration): void {
  ctx.services.get(REGISTRATIONS, () => new Map<string, AgentRegistration>()).set(ctx.host, reg);
}

/** The host's registration in this run, when ramdisk_media made one (and it was not closed). */
export function registrationOf(ctx: ModuleContext): AgentRegistration | undefined {
  return ctx.services.get(REGISTRATIONS, () => new Map<string, AgentRegistration>()).get(ctx.host);
}
