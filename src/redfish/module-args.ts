// Arguments every Redfish module shares (driver_info override, request tuning). Module files
// import this with their definition, so it loads nothing else; pool.ts turns the arguments into
// the run's client (clientFromArgs).
import type { Static } from '@sinclair/typebox';
import { Type } from '../schema/type-builder.js';

const DriverInfoSchema = Type.Object(
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

export type CommonRedfishArgs = {
  driver_info?: Static<typeof DriverInfoSchema> | undefined;
  request_retries?: number | undefined;
  request_timeout?: number | undefined;
  retry_max_delay?: number | undefined;
  task_timeout?: number | undefined;
};

/** redfish_boot_device's devices (boot.ts maps them to BootSourceOverrideTarget); `none` clears
 * the override: the node boots by its own boot order again. */
export const BOOT_DEVICES = ['disk', 'pxe', 'cd', 'bios', 'usb', 'none'] as const;
export type BootDevice = (typeof BOOT_DEVICES)[number];

/** redfish_power's states and operations (power.ts picks a ResetType for each). */
export const POWER_REQUESTS = ['on', 'off', 'graceful_off', 'restart', 'graceful_restart', 'cycle', 'nmi'] as const;
export type PowerRequest = (typeof POWER_REQUESTS)[number];
