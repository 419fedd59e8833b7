// wait_agent's first half for a ramdisk that calls home: wait for the report its ramdisk_media
// registration receives, then take from it where to connect (every reported address, IPv4
// first) and the one host key to accept (the reported key ssh2 negotiates first), so no
// known_hosts entry, accept-new or ssh_host is involved.
import type { AgentRegistration, AgentReport } from '../../http/agent-callbacks.js';
import { sha256Fingerprint } from '../../connection/fingerprint.js';
import type { HostKeyError, TsbmError } from '../../errors.js';
import { connectionSpecFor } from '../../inventory/connection-vars.js';
import { hostError } from '../../module-api/ramdisk-exec.js';
import type { ModuleContext } from '../../module-api/types.js';
import { formatDuration } from '../../output/format.js';
import { registrationOf } from './agent-shared.js';

export interface CallHome {
  addresses: string[];
  fingerprint: string;
  reportedAfterS: number;
  /** The address that answered SSH. */
  connectedTo?: string;
}

/** ssh2's host key preference: the reported key of the first type the ramdisk has is the one it presents. */
const KEY_ORDER = ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'ssh-rsa'];

/** The host's registration when it is to be used: ramdisk_media gave the node a callback and the host has no ssh_host. */
export function usesCallHome(ctx: ModuleContext): AgentRegistration | undefined {
  const reg = registrationOf(ctx);
  if (!reg) return undefined;
  const explicit = ['ssh_host', 'ansible_host', 'ansible_ssh_host'].some((n) => ctx.vars[n] !== undefined && ctx.vars[n] !== null && ctx.vars[n] !== '');
  if (explicit) ctx.log(`${ctx.host}: ssh_host is set, so wait_agent connects there as configured (the ramdisk's call home is not waited for)`, 1);
  return explicit ? undefined : reg;
}

export function callHomeTarget(r: AgentReport & { reportedAfterS: number }): CallHome {
  const key = [...r.hostKeys].sort((a, b) => rank(a) - rank(b))[0]!;
  return {
    addresses: r.addresses.map((a) => a.address),
    fingerprint: sha256Fingerprint(Buffer.from(key.split(' ')[1]!, 'base64')),
    reportedAfterS: r.reportedAfterS,
  };
}

const rank = (line: string) => {
  const i = KEY_ORDER.indexOf(line.split(' ')[0]!);
  return i < 0 ? KEY_ORDER.length : i;
};

export async function waitForCallHome(ctx: ModuleContext, reg: AgentRegistration, timeoutS: number): Promise<AgentReport & { reportedAfterS: number }> {
  const start = Date.now();
  const port = (() => {
    try {
      return connectionSpecFor(ctx.host, ctx.vars).port;
    } catch {
      return 22;
    }
  })();
  const report = await new Promise<AgentReport | undefined>((resolve, reject) => {
    const usable = () => (reg.report?.addresses.length ? reg.report : undefined);
    if (usable()) return resolve(usable());
    let ticker: NodeJS.Timeout | undefined;
    const done = (v: AgentReport | undefined, e?: unknown) => {
      off();
      clearTimeout(timer);
      clearInterval(ticker);
      ctx.signal.removeEventListener('abort', onAbort);
      if (e) reject(e);
      else resolve(v);
    };
    const off = reg.onChange(() => {
      const r = usable();
      if (r) done(r);
    });
    const timer = setTimeout(() => done(undefined), timeoutS * 1000);
    const onAbort = () => done(undefined, ctx.signal.reason ?? new Error('aborted'));
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const say = () => {
      const refused = reg.refused.at(-1);
      const noAddr = reg.report && !reg.report.addresses.length ? '; it called but reported no address other than loopback/link-local' : '';
      ctx.progress({ message: `waiting for the ramdisk to call home (${formatDuration(Date.now() - start)} of ${timeoutS}s)${noAddr}${refused ? `; refused a call from ${refused.from}: ${refused.detail}` : ''}` });
    };
    say();
    ticker = setInterval(say, 5000);
  });
  if (!report) {
    const refused = reg.refused.at(-1);
    throw hostError(
      ctx,
      `the ramdisk did not call home within ${timeoutS}s${refused ? ` (refused ${reg.refused.length} call(s); the last from ${refused.from}: ${refused.detail})` : reg.report ? ' with an address other than loopback/link-local' : ''}`,
      `check the node's console: did it boot tsbm's ramdisk (tsbm ramdisk build), did it find the TSBM-NODE volume, can it reach ${new URL(reg.url).origin} (tsbm_http_address); or give the host ssh_host (port ${port}) to connect without the call home`,
    );
  }
  return { ...report, reportedAfterS: Math.round((Date.now() - start) / 1000) };
}

export function callHomeHostKeyError(ctx: Pick<ModuleContext, 'host' | 'task'>, e: HostKeyError, address: string): TsbmError {
  const said = e.message.replace(new RegExp(`^${ctx.host}: `), '').replace(/, but ssh_host_key_fingerprint pins /, ', but the ramdisk reported ');
  return hostError(
    ctx,
    `the SSH server at ${address} is not the ramdisk that called home, so nothing was run on it: ${said}`,
    'another machine answers at the reported address (address reused?), or the ramdisk restarted sshd with new keys; check the node and its network',
    e,
  );
}
