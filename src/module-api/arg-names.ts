// The names the deploy modules' arguments accept, shared by the capabilities whose schemas and
// checks use them (preflight, ramdisk, disk): one list for the schema and the code.

/** What the playbook deploys, which decides what the image_source must be. */
export const PREFLIGHT_KINDS = ['bootc', 'image', 'ramdisk', 'undeploy', 'anaconda'] as const;
export type PreflightKind = (typeof PREFLIGHT_KINDS)[number];

/** Checks an operator may skip (the scheme and checksum checks are pure and always run). */
export const SKIPPABLE_CHECKS = ['bmc', 'registry', 'image_url', 'iso'] as const;

/** Ironic's root device hint names and the type of each (root_device, root-device-hints.ts). */
export type HintName =
  | 'size'
  | 'model'
  | 'vendor'
  | 'serial'
  | 'wwn'
  | 'wwn_with_extension'
  | 'wwn_vendor_extension'
  | 'name'
  | 'rotational'
  | 'hctl'
  | 'by_path'
  | 'tran';

export const HINT_TYPES: Record<HintName, 'int' | 'str' | 'bool'> = {
  size: 'int',
  model: 'str',
  vendor: 'str',
  serial: 'str',
  wwn: 'str',
  wwn_with_extension: 'str',
  wwn_vendor_extension: 'str',
  name: 'str',
  rotational: 'bool',
  hctl: 'str',
  by_path: 'str',
  tran: 'str',
};
export const HINT_NAMES = Object.keys(HINT_TYPES) as HintName[];

/** How wait_agent proves the ramdisk is the node the BMC controls (identity.ts). */
export type IdentityMode = 'uuid' | 'mac' | 'both' | 'any' | 'auto' | 'off';
export const IDENTITY_MODES: IdentityMode[] = ['auto', 'uuid', 'mac', 'both', 'any', 'off'];

/** The deploys whose ramdisk contract wait_agent can check (ramdisk-contract.ts, docs/ramdisk.md). */
export const DEPLOYS = ['bootc', 'image', 'ramdisk', 'undeploy'] as const;
export type Deploy = (typeof DEPLOYS)[number];
