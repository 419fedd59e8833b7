// What wait_agent says while it waits for a node's SSH: where it knocks, for how long, the last
// error whole, and once nothing has changed for long (util/wait.ts's stalledAfterMs) what it is
// waiting on and which setting changes that; the same words end its timeout message.
import { connectionSpecFor } from '../../inventory/connection-vars.js';
import type { ModuleContext } from '../../module-api/types.js';
import { formatDuration } from '../../output/format.js';

/** Said when the playbook gives no stall_hint of its own. */
const DEFAULT_HINT = 'ssh_host and ssh_port say where it is reached, the timeout argument how long to wait';

/** `root@10.0.0.5:22`: the SSH target the wait dials, as the inventory makes it. */
export function sshTargetOf(ctx: Pick<ModuleContext, 'host' | 'vars'>): string {
  try {
    const s = connectionSpecFor(ctx.host, ctx.vars);
    return `${s.user}@${s.address.includes(':') ? `[${s.address}]` : s.address}:${s.port}`;
  } catch {
    return ctx.host; // a bad ssh_* value: the connect attempt itself says what is wrong
  }
}

export interface SshWaitState {
  elapsedMs: number;
  attempt: number;
  lastError?: unknown;
  unchangedMs: number;
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : e === undefined ? '' : String(e));

/** The progress line of one attempt. */
export function sshWaitProgress(s: SshWaitState, o: { what: string; target: string; stalledAfterMs: number; hint?: string | undefined }): string {
  const head = `waiting for SSH on ${o.target}: ${formatDuration(s.elapsedMs)} elapsed, attempt ${s.attempt}`;
  const last = errorText(s.lastError);
  if (s.unchangedMs < o.stalledAfterMs) return last ? `${head}, last error: ${last}` : head;
  const same = last ? `the same error for ${formatDuration(s.unchangedMs)}: ${last}` : `no answer for ${formatDuration(s.unchangedMs)}`;
  return `${head}, ${same}; still waiting for ${o.what} to answer there: ${o.hint ?? DEFAULT_HINT}`;
}

/** The end of a timeout message: what was waited on and which setting changes it. */
export function sshWaitTimeoutHint(o: { what: string; target: string; hint?: string | undefined }): string {
  return `waited for ${o.what} on ${o.target}: ${o.hint ?? DEFAULT_HINT}`;
}
