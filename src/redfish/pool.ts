// One RedfishClient per System per run and one login per BMC, shared through the run's services
// and logged out when the run ends. Log/retry/warning callbacks go to whichever task is using
// the client now.
import { createHmac, randomBytes } from 'node:crypto';
import type { ModuleContext } from '../module-api/types.js';
import { limitFromVars } from '../util/limits.js';
import { BmcSession } from './bmc-session.js';
import { RedfishClient } from './client.js';
import { endpointFromDriverInfo, type RedfishEndpoint } from './endpoint.js';
import type { CommonRedfishArgs } from './module-args.js';
import type { RetryPolicy } from './transport.js';

export interface ClientTuning {
  retry?: Partial<RetryPolicy>;
  timeoutMs?: number;
  taskTimeoutMs?: number;
  basicAuth?: boolean;
  maxBodyBytes?: number;
}

interface Pooled {
  client: RedfishClient;
  sink: { ctx: ModuleContext };
}

/**
 * The run's clients, logged out together when it ends: one after another, a thousand BMCs'
 * session DELETEs held the recap back for seconds.
 */
function runClients(ctx: ModuleContext): Set<RedfishClient> {
  return ctx.services.get('redfish:clients', () => {
    const clients = new Set<RedfishClient>();
    ctx.services.onClose(async () => {
      const results = await Promise.allSettled([...clients].map((c) => c.close()));
      const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed.length === 1) throw failed[0]?.reason;
      if (failed.length > 1) {
        const first = failed[0]?.reason;
        throw new Error(`${failed.length} BMC logouts failed; the first: ${first instanceof Error ? first.message : String(first)}`);
      }
    });
    return clients;
  });
}

/**
 * Who logs in where: BMC, user, password and how the BMC is trusted. Two inventory hosts on one
 * BMC with different passwords are two logins. The password enters only as an HMAC under a key
 * made for this process, so the key (which may end up in a debugger or a dump) never holds it.
 */
const KEY_SECRET = randomBytes(32);
function credentialKey(e: RedfishEndpoint, basicAuth = false): string {
  const pw = e.password === undefined ? '-' : createHmac('sha256', KEY_SECRET).update(e.password).digest('base64url');
  const trust = e.verifyCa === true ? 'ca' : e.verifyCa === false ? 'none' : `file:${e.verifyCa}`;
  return `${e.baseUrl}#${e.username ?? ''}#${pw}#${trust}#${basicAuth ? 'basic' : 'auto'}`;
}

/** The run's client for the BMC in `driverInfo` (Ironic field names), bound to this task's ctx. */
export function redfishClientFor(ctx: ModuleContext, driverInfo: unknown, tuning: ClientTuning = {}): RedfishClient {
  const endpoint = endpointFromDriverInfo(driverInfo);
  if (endpoint.password) ctx.secret(endpoint.password);
  const login = credentialKey(endpoint, tuning.basicAuth);
  // The System id is part of the key: a chassis BMC serving several nodes keeps one client per
  // node (its own connection and discovered paths), all on the BMC's one session.
  const key = `redfish:${login}#${endpoint.systemId ?? ''}`;
  const pooled = ctx.services.get<Pooled>(key, () => {
    const sink = { ctx };
    const session = ctx.services.get(`redfish-session:${login}`, () =>
      new BmcSession(endpoint, (v) => sink.ctx.secret(v), (m) => sink.ctx.log(m, 2), tuning.basicAuth ?? false, (m) => sink.ctx.warn(m)),
    );
    const client = new RedfishClient(endpoint, {
      ...tuning,
      node: ctx.host,
      // No AbortSignal: the client outlives the task that created it.
      onSecret: (v) => sink.ctx.secret(v),
      onLog: (m, level) => sink.ctx.log(m, level),
      onWarn: (m) => sink.ctx.warn(m),
      onRetry: ({ attempt, retries, delayMs, reason }) => {
        const message = `retry ${attempt}/${retries} in ${delayMs} ms (BMC ${endpoint.bmc}): ${reason}`;
        if (sink.ctx.retry) sink.ctx.retry({ attempt, retries, message });
        else sink.ctx.log(message, 1);
      },
    }, session);
    runClients(ctx).add(client);
    return { client, sink };
  });
  pooled.sink.ctx = ctx;
  return pooled.client;
}

/** The run's client for a Redfish module: the host's driver_info, overridden by the task's arguments. */
export function clientFromArgs(ctx: ModuleContext, args: CommonRedfishArgs): RedfishClient {
  const fromVars = ctx.vars.driver_info;
  const base = fromVars && typeof fromVars === 'object' ? (fromVars as Record<string, unknown>) : {};
  const driverInfo = { ...base, ...(args.driver_info ?? {}) };
  return redfishClientFor(ctx, driverInfo, {
    maxBodyBytes: limitFromVars(ctx.vars, 'redfishBodyBytes'),
    ...(args.request_timeout !== undefined ? { timeoutMs: args.request_timeout * 1000 } : {}),
    ...(args.task_timeout !== undefined ? { taskTimeoutMs: args.task_timeout * 1000 } : {}),
    retry: {
      ...(args.request_retries !== undefined ? { retries: args.request_retries } : {}),
      ...(args.retry_max_delay !== undefined ? { maxDelayMs: args.retry_max_delay * 1000, baseDelayMs: Math.min(500, args.retry_max_delay * 1000) } : {}),
    },
  });
}
