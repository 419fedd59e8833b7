// Arguments every Redfish module shares (driver_info override, request tuning) and how a
// module turns them into the run's client.
import { type Static, Type } from '@sinclair/typebox';
import type { ModuleContext } from '../module-api/types.js';
import type { RedfishClient } from './client.js';
import { limitFromVars } from '../util/limits.js';
import { redfishClientFor } from './pool.js';

export const DriverInfoSchema = Type.Object(
  {
    redfish_address: Type.Optional(Type.String({ description: 'BMC address, https://host[:port] (a bare host means https)' })),
    redfish_username: Type.Optional(Type.String()),
    redfish_password: Type.Optional(Type.String({ description: 'Secret: never printed' })),
    redfish_system_id: Type.Optional(Type.String({ description: 'System Id or path when the BMC manages several' })),
    redfish_verify_ca: Type.Optional(
      Type.Union([Type.Boolean(), Type.String()], { description: 'true (system CAs, default), a CA bundle path, or false (no verification, warns)' }),
    ),
    redfish_allowed_origins: Type.Optional(
      Type.Array(Type.String(), {
        description:
          "Other origins (https://host[:port]) this BMC may send tsbm to with its credentials, for BMCs that really delegate (links, Location headers, task monitors); default none: any URL off the BMC's own origin is refused",
      }),
    ),
  },
  { additionalProperties: true, description: "Overrides the host's `driver_info` (Ironic field names); merged over it" },
);

export const commonRedfishArgs = {
  driver_info: Type.Optional(DriverInfoSchema),
  request_retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, description: 'Retries per request on connection errors, 5xx on reads and busy answers (default 4)' })),
  request_timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Seconds one HTTP request may take (default 60)' })),
  task_timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Seconds to follow a BMC task monitor after 202 Accepted (default 300)' })),
  retry_max_delay: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Longest pause between retries in seconds (default 10)' })),
};

type CommonArgs = {
  driver_info?: Static<typeof DriverInfoSchema> | undefined;
  request_retries?: number | undefined;
  request_timeout?: number | undefined;
  retry_max_delay?: number | undefined;
  task_timeout?: number | undefined;
};

export function clientFromArgs(ctx: ModuleContext, args: CommonArgs): RedfishClient {
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
